"""The whole local stack: emulators (Pub/Sub, Firestore, Cloud Storage), topology,
dispatcher, worker and renderer as real processes."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import secrets
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic_settings import BaseSettings

from scrapejobs_devstack.emulators import Emulator, start_emulators, start_storage
from scrapejobs_devstack.processes import ManagedProcess, start_process, wait_http
from scrapejobs_devstack.topology_bootstrap import EMULATOR_TOPOLOGY, ensure_topology
from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.domain.lanes import RENDER_LANE
from scrapejobs_shared.messaging.topology import Topology
from scrapejobs_worker.settings import WorkerSettings

LOOPBACK_ALLOWLIST = "127.0.0.0/8,::1/128"  # what the services may fetch, unless the env says


def fetch_allowlist() -> str:
    """``SCRAPEJOBS_FETCH_ALLOWLIST`` from the environment when set (a narrower allowlist can
    be tried locally), else all of loopback."""
    return os.environ.get("SCRAPEJOBS_FETCH_ALLOWLIST") or LOOPBACK_ALLOWLIST


def system_chromium() -> str | None:
    """The system's Chromium, which the renderer drives: Debian's old headless shell
    (``chromium-headless-shell``: about half the CPU per page) or else the full browser."""
    for name in ("chromium-headless-shell", "chromium", "chromium-browser"):
        if found := shutil.which(name):
            return found
    return None


DEV_WEBHOOK_SECRET = "whsec_c2NyYXBlam9icy1sb2NhbC1kZXZlbG9wbWVudC1rZXk="  # docs/api.md, "Webhooks"


# What `make dev` decides itself, whatever its caller's environment says: where the emulators
# and the stack's own services are, and what keeps a job off them.
STACK_OWNED = frozenset(
    {
        "SCRAPEJOBS_PROJECT_ID",
        "SCRAPEJOBS_TASK_TOPIC",
        "SCRAPEJOBS_WEBHOOK_TOPIC",
        "SCRAPEJOBS_FILES_BUCKET",
        "SCRAPEJOBS_API_URL",
        "SCRAPEJOBS_PUSH_AUTH",
        "SCRAPEJOBS_FETCH_REFUSED_PORTS",
        "SCRAPEJOBS_ACK_DEADLINE_S",
        "SCRAPEJOBS_MAX_DELIVERY_ATTEMPTS",
        "SCRAPEJOBS_RENDER_BROWSER_PATH",
    }
)


def settings_read(settings: type[BaseSettings]) -> frozenset[str]:
    """The ``SCRAPEJOBS_*`` variables a service's settings read."""
    return frozenset(f"SCRAPEJOBS_{name.upper()}" for name in settings.model_fields)


DISPATCHER_READS = settings_read(DispatcherSettings)
WORKER_READS = settings_read(WorkerSettings)


def passed_settings(env: Mapping[str, str], reads: frozenset[str]) -> dict[str, str]:
    """The ``SCRAPEJOBS_*`` variables of ``env`` a service reads, but those the stack owns: the
    caller's own choices, over make dev's defaults."""
    return {name: env[name] for name in sorted(reads - STACK_OWNED) if name in env}


@dataclass
class StackConfig:
    project_id: str = "scrapejobs-local"
    dispatcher_port: int = 8080
    worker_port: int = 8081
    renderer_port: int = 8082
    pubsub_port: int = 8085
    firestore_port: int = 8086
    storage_port: int = 8087
    files_bucket: str = "scrapejobs-files"  # the pages' files (screenshots): Terraform's files.tf
    log_dir: Path = Path(".devstack/logs")
    topology: Topology = EMULATOR_TOPOLOGY
    worker_env: dict[str, str] = field(default_factory=dict)
    dispatcher_env: dict[str, str] = field(default_factory=dict)
    # api_key mode: the key the local scheduler calls with (its digest is the dispatcher's
    # SCRAPEJOBS_SCHEDULER_KEY_HASHES)
    scheduler_key: str | None = None
    worker_processes: int = 1  # uvicorn worker processes of the worker service (one per core)
    # a command the worker runs under (the bench's instruction count: valgrind), and how long
    # the worker may then take to answer its health check
    worker_wrapper: tuple[str, ...] = ()
    worker_ready_s: float = 60.0
    # the render lane's service: a worker driving this Chromium; without one (not installed),
    # the render lane pushes to the worker, which fails rendered tasks render_unavailable
    render_browser: str | None = field(default_factory=system_chromium)
    renderer_env: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls) -> StackConfig:
        """Ports from DISPATCHER_PORT, WORKER_PORT, PUBSUB_PORT, FIRESTORE_PORT, STORAGE_PORT;
        delivery from
        MAX_DELIVERY_ATTEMPTS (a failed push is retried after 1 s: topology_bootstrap.py); the
        services' settings: every SCRAPEJOBS_* variable each reads (the dispatcher's sign-in:
        SCRAPEJOBS_AUTH_MODE and SCRAPEJOBS_API_KEY_HASHES, off otherwise; the AI provider's
        to both), but those the stack owns (STACK_OWNED)."""
        env = os.environ
        scheduler = None
        if env.get("SCRAPEJOBS_AUTH_MODE") == "api_key":
            scheduler = "sj_local_scheduler_" + secrets.token_urlsafe(32)
        topology = dataclasses.replace(
            EMULATOR_TOPOLOGY,
            max_delivery_attempts=int(
                env.get("MAX_DELIVERY_ATTEMPTS", EMULATOR_TOPOLOGY.max_delivery_attempts)
            ),
        )
        return cls(
            project_id=env.get("SCRAPEJOBS_PROJECT_ID", cls.project_id),
            dispatcher_port=int(env.get("DISPATCHER_PORT", cls.dispatcher_port)),
            worker_port=int(env.get("WORKER_PORT", cls.worker_port)),
            renderer_port=int(env.get("RENDERER_PORT", cls.renderer_port)),
            pubsub_port=int(env.get("PUBSUB_PORT", cls.pubsub_port)),
            firestore_port=int(env.get("FIRESTORE_PORT", cls.firestore_port)),
            storage_port=int(env.get("STORAGE_PORT", cls.storage_port)),
            topology=topology,
            worker_processes=int(env.get("WORKER_PROCESSES", cls.worker_processes)),
            dispatcher_env={
                **passed_settings(env, DISPATCHER_READS),
                **({"SCRAPEJOBS_SCHEDULER_KEY_HASHES": _digest(scheduler)} if scheduler else {}),
            },
            scheduler_key=scheduler,
            worker_env=passed_settings(env, WORKER_READS),
        )

    @property
    def dispatcher_url(self) -> str:
        return f"http://127.0.0.1:{self.dispatcher_port}"

    @property
    def worker_url(self) -> str:
        return f"http://127.0.0.1:{self.worker_port}"

    @property
    def renderer_url(self) -> str | None:
        return f"http://127.0.0.1:{self.renderer_port}" if self.render_browser else None


@dataclass
class Stack:
    config: StackConfig
    pubsub: Emulator | None = None
    firestore: Emulator | None = None
    storage: Emulator | None = None
    dispatcher: ManagedProcess | None = None
    worker: ManagedProcess | None = None
    renderer: ManagedProcess | None = None

    def emulator_env(self) -> dict[str, str]:
        assert self.pubsub is not None and self.firestore is not None
        return {
            "PUBSUB_EMULATOR_HOST": self.pubsub.host,
            "FIRESTORE_EMULATOR_HOST": self.firestore.host,
            "SCRAPEJOBS_PROJECT_ID": self.config.project_id,
            "GOOGLE_CLOUD_PROJECT": self.config.project_id,
            "SCRAPEJOBS_TASK_TOPIC": self.config.topology.task_topic,
            "SCRAPEJOBS_WEBHOOK_TOPIC": self.config.topology.webhook_topic,
            **self._storage_env(),
        }

    def _storage_env(self) -> dict[str, str]:
        if self.storage is None:
            return {}
        return {
            "STORAGE_EMULATOR_HOST": f"http://{self.storage.host}",
            "SCRAPEJOBS_FILES_BUCKET": self.config.files_bucket,
        }

    def start(self) -> None:
        try:
            self.start_emulators()
            self.bootstrap()
            self.start_worker()
            self.start_renderer()
            self.start_dispatcher()
        except BaseException:
            self.stop()
            raise

    def start_emulators(self) -> None:
        c = self.config
        self.pubsub, self.firestore = start_emulators(
            c.pubsub_port, c.firestore_port, c.project_id, c.log_dir
        )
        self.storage = start_storage(c.storage_port, c.files_bucket, c.log_dir)

    def bootstrap(self) -> None:
        os.environ.update(self.emulator_env())
        renderer = self.config.renderer_url
        ensure_topology(
            self.config.project_id,
            self.config.worker_url,
            self.config.topology,
            {RENDER_LANE: renderer} if renderer else None,
        )

    def _worker_env(self) -> dict[str, str]:
        return {
            **self.emulator_env(),
            "SCRAPEJOBS_PUSH_AUTH": "none",
            "SCRAPEJOBS_FETCH_ALLOWLIST": fetch_allowlist(),
            # loopback is fetchable here (the local sites), but never the stack itself: a job
            # must not reach the emulators' APIs or the services' own endpoints
            "SCRAPEJOBS_FETCH_REFUSED_PORTS": ",".join(str(p) for p in sorted(self._own_ports())),
            # a batch answers within the subscription's ack deadline; tasks dead-letter after
            # as many attempts as the subscription delivers
            "SCRAPEJOBS_ACK_DEADLINE_S": str(self.config.topology.ack_deadline_s),
            "SCRAPEJOBS_MAX_DELIVERY_ATTEMPTS": str(self.config.topology.max_delivery_attempts),
            # signs webhooks of jobs without their own secret (a development key, not a secret)
            "SCRAPEJOBS_WEBHOOK_SECRETS": DEV_WEBHOOK_SECRET,
            # screenshots' URLs are the dispatcher's (it serves them to the job's tenant)
            "SCRAPEJOBS_API_URL": self.config.dispatcher_url,
            **self.config.worker_env,
        }

    def _own_ports(self) -> set[int]:
        """The ports of the emulators and the services of this stack."""
        ports = {self.config.dispatcher_port, self.config.worker_port}
        if self.config.render_browser:
            ports.add(self.config.renderer_port)
        for name in ("PUBSUB_EMULATOR_HOST", "FIRESTORE_EMULATOR_HOST", "STORAGE_EMULATOR_HOST"):
            port = self.emulator_env().get(name, "").rpartition(":")[2]
            if port.isdigit():
                ports.add(int(port))
        return ports

    def start_worker(self) -> None:
        self.worker = self._service(
            "worker",
            "scrapejobs_worker",
            self.config.worker_port,
            self._worker_env(),
            processes=self.config.worker_processes,
            wrapper=self.config.worker_wrapper,
            ready_s=self.config.worker_ready_s,
        )

    def start_renderer(self) -> None:
        """The render lane's service: the worker with a browser, one process (a browser per
        process; it renders several pages at once)."""
        if self.config.render_browser is None:
            return
        env = {
            **self._worker_env(),
            "SCRAPEJOBS_RENDER_BROWSER_PATH": self.config.render_browser,
            **self.config.renderer_env,
        }
        self.renderer = self._service(
            "renderer", "scrapejobs_worker", self.config.renderer_port, env
        )

    def start_dispatcher(self) -> None:
        topology = self.config.topology
        env = {
            **self.emulator_env(),
            "SCRAPEJOBS_AUTH_MODE": "none",
            # a batch stalled longer than a redelivery can take is published again
            "SCRAPEJOBS_RECONCILE_AFTER_S": str(
                topology.max_backoff_s + topology.ack_deadline_s + 30
            ),
            **self.config.dispatcher_env,
        }
        self.dispatcher = self._service(
            "dispatcher", "scrapejobs_dispatcher", self.config.dispatcher_port, env
        )

    def _service(
        self,
        name: str,
        package: str,
        port: int,
        env: dict[str, str],
        processes: int = 1,
        wrapper: tuple[str, ...] = (),
        ready_s: float = 60.0,
    ) -> ManagedProcess:
        argv = [
            *wrapper,
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            f"{package}.main:app_from_env",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-access-log",
        ]
        if processes > 1:  # a supervisor and its children, one process group: stopped together
            argv += ["--workers", str(processes)]
        process = start_process(name, argv, env, self.config.log_dir)
        try:
            wait_http(f"http://127.0.0.1:{port}/healthz", process, timeout_s=ready_s)
        except BaseException:
            process.stop()  # never leave a process we started but did not record
            raise
        return process

    def processes(self) -> list[ManagedProcess]:
        candidates = [self.dispatcher, self.worker, self.renderer]
        emulators = (self.pubsub, self.firestore, self.storage)
        candidates += [e.process for e in emulators if e is not None]
        return [p for p in candidates if p is not None]

    def stop(self) -> None:
        for process in self.processes():
            process.stop()

    def write_state(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        state = {p.name: p.pid for p in self.processes()}
        path.write_text(json.dumps(state))


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()
