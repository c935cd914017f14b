"""One simulated deployment: the dispatcher and N worker instances, each the service's own app
built by its composition root (``create_app(settings, overrides)``), over one set of store
twins behind the limits model (``limited_ports.py``), Pub/Sub push (``pubsub_push.py``),
Cloud Run (``cloud_run.py``) and simulated sites (``sites.py``), all on the simulated clock
(``virtual_clock.py``)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, cast

from scrapejobs_dispatcher.adapters import Overrides as DispatcherOverrides
from scrapejobs_dispatcher.main import create_app as dispatcher_app
from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_dispatcher.tenants.api_keys import generate_api_key
from scrapejobs_scale.cloud_run import CloudRunService
from scrapejobs_scale.document_ledger import DocumentLedger
from scrapejobs_scale.instance_cpu import InstanceCpu
from scrapejobs_scale.limited_ports import LimitedPorts
from scrapejobs_scale.limits import CloudRunLimits, FirestoreLimits, PushLimits
from scrapejobs_scale.pubsub_push import SimulatedPubSub
from scrapejobs_scale.sites import SimulatedSites
from scrapejobs_scale.virtual_clock import START, VirtualClock
from scrapejobs_shared.domain.tenancy import Role
from scrapejobs_shared.messaging.topology import DEAD_LETTER_PATH, PUSH_PATH
from scrapejobs_shared.observability.telemetry import telemetry_with
from scrapejobs_shared.ports.api_keys import ApiKeyRecord
from scrapejobs_worker.adapters import Overrides as WorkerOverrides
from scrapejobs_worker.main import create_app as worker_app
from scrapejobs_worker.settings import WorkerSettings

RECONCILE_PATH = "/v1/maintenance/reconcile"
REPUBLISH_PATH = "/v1/maintenance/republish"
MONITORS_TICK_PATH = "/v1/maintenance/monitors"
# Cloud Scheduler's maintenance calls, seconds apart, as Terraform schedules them
# (terraform/locals.tf, maintenance_jobs; a test keeps them equal; the daily usage sum is left
# out: no workload lasts a day)
MAINTENANCE_EVERY_S = {RECONCILE_PATH: 300.0, REPUBLISH_PATH: 600.0, MONITORS_TICK_PATH: 60.0}


@dataclass(frozen=True)
class Deployment:
    workers: int = 20
    worker_concurrency: int = 80  # Cloud Run's default
    dispatchers: int = 2
    tenants: int = 0  # with tenants, each has an API key (auth_mode api_key); else auth off
    ack_deadline_s: float = 60.0
    loss: float = 0.0  # the share of pushes Pub/Sub loses
    worker_settings: dict[str, Any] = field(default_factory=dict)
    dispatcher_settings: dict[str, Any] = field(default_factory=dict)
    latency_s: Callable[[str], float] = lambda host: 0.05
    page_cpu_s: float = 0.0  # a page's CPU on its instance's one vCPU (instance_cpu.py)
    links: Callable[[str], list[str]] = lambda url: []  # what each simulated page links to
    maintenance_s: dict[str, float] = field(default_factory=lambda: dict(MAINTENANCE_EVERY_S))


STALLED_S = 1800.0  # no page ended for this long: the run is stuck
SUBMIT_TRIES = 10  # a client sends a refused submission (503, 429) again after Retry-After


class Simulation:
    def __init__(
        self,
        deployment: Deployment,
        clock: VirtualClock,
        limits: FirestoreLimits | None = None,
        wrap: Callable[[LimitedPorts], None] | None = None,
    ) -> None:
        self.deployment = deployment
        self.clock = clock
        self.ledger = DocumentLedger(limits or FirestoreLimits())
        self.ports = LimitedPorts(self.ledger, clock)
        if wrap is not None:
            wrap(self.ports)
        self.sites = SimulatedSites(clock.monotonic, deployment.latency_s, deployment.links)
        self.workers = CloudRunService(
            "worker", CloudRunLimits(deployment.workers, deployment.worker_concurrency)
        )
        self.dispatchers = CloudRunService(
            "dispatcher", CloudRunLimits(deployment.dispatchers, deployment.worker_concurrency)
        )
        self.keys: list[str] = []
        self._operator: dict[str, str] = {}  # auth off: no key
        self.pubsub = SimulatedPubSub(
            self.workers.post,
            PUSH_PATH,
            DEAD_LETTER_PATH,
            PushLimits(ack_deadline_s=deployment.ack_deadline_s),
            loss=deployment.loss,
        )
        self._stack = AsyncExitStack()
        self._pushing: asyncio.Task[None] | None = None
        self._scheduled: list[asyncio.Task[None]] = []
        self.reconciled = 0  # batches reconcile published again
        self.refused_submissions = 0  # 503s and 429s the clients were answered, and retried
        self.stalled = False  # the run stopped with pages left, none ending for STALLED_S
        self.scheduler_failures: list[str] = []  # scheduled calls refused (the next ones run)

    async def __aenter__(self) -> Simulation:
        self.keys = await self._tenant_keys()
        telemetry = telemetry_with("scale")
        workers = [
            worker_app(self._worker_settings(n), self._worker_ports(), telemetry)
            for n in range(self.deployment.workers)
        ]
        dispatchers = [
            dispatcher_app(self._dispatcher_settings(), self._dispatcher_ports(), telemetry)
            for _ in range(self.deployment.dispatchers)
        ]
        await self.workers.start(workers, self._stack)
        await self.dispatchers.start(dispatchers, self._stack)
        self._pushing = asyncio.ensure_future(self.pubsub.run())
        for path, every_s in self.deployment.maintenance_s.items():
            self._scheduled.append(asyncio.ensure_future(self._scheduling(path, every_s)))
        return self

    async def __aexit__(self, *exc: object) -> None:
        for task in self._scheduled:
            task.cancel()
        await asyncio.gather(*self._scheduled, return_exceptions=True)
        self.pubsub.stop()
        if self._pushing is not None:
            await self._pushing
        await self.pubsub.drop()
        await self._stack.aclose()

    def _worker_settings(self, n: int) -> WorkerSettings:
        values: dict[str, Any] = {
            "push_auth": "none",
            "extraction_processes": 0,
            "document_processes": 0,
            "ack_deadline_s": self.deployment.ack_deadline_s,
            **self.deployment.worker_settings,
        }
        return WorkerSettings(**values)

    def _dispatcher_settings(self) -> DispatcherSettings:
        values: dict[str, Any] = {
            "auth_mode": "api_key" if self.deployment.tenants else "none",
            "dashboard_cache_s": 0,
            "files_bucket": "",
            **self.deployment.dispatcher_settings,
        }
        return DispatcherSettings(**values)

    def _worker_ports(self) -> WorkerOverrides:
        ports = self.ports
        given: dict[str, Any] = {
            "store": ports.store,
            "stats_writer": ports.store,
            "gate": ports.gate,
            "publisher": self.pubsub,
            "fetcher": InstanceCpu(self.sites, self.clock.monotonic, self.deployment.page_cpu_s),
            "webhook_outbox": ports.webhook_outbox,
            "webhook_log": ports.webhook_log,
            "worker_directory": ports.store,
            "held_batches": ports.held_batches,
            "tenant_quotas": ports.tenant_quotas,
            "budgeted_work": ports.budgeted_work,
        }
        return cast(WorkerOverrides, given)

    def _dispatcher_ports(self) -> DispatcherOverrides:
        ports = self.ports
        given: dict[str, Any] = {
            "store": ports.store,
            "stats_writer": ports.store,
            "held_batches": ports.held_batches,
            "publisher": self.pubsub,
            "gate": ports.gate,
            "idempotency_keys": ports.idempotency_keys,
            "stats_reader": ports.store,
            "usage_meter": ports.store,
            "webhook_outbox": ports.webhook_outbox,
            "webhook_log": ports.webhook_log,
            "worker_directory": ports.store,
            "session_revocations": ports.session_revocations,
            "api_keys": ports.api_keys,
            "tenant_quotas": ports.tenant_quotas,
            "tenant_proxies": ports.tenant_proxies,
            "quota_ledger": ports.quota_ledger,
            "budgeted_work": ports.budgeted_work,
            "file_store": None,
            "monitor_store": ports.monitor_store,
            "monitor_checks": ports.monitor_checks,
        }
        return cast(DispatcherOverrides, given)

    async def submit(self, body: dict[str, Any], tenant: int | None = None) -> str:
        """``POST /v1/jobs`` through the dispatcher service (as tenant number ``tenant``'s
        key, when the deployment has tenants): the job's id."""
        headers = {"X-API-Key": self.keys[tenant]} if tenant is not None else {}
        headers["Idempotency-Key"] = uuid.uuid4().hex  # a refused try is sent again, once
        for _ in range(SUBMIT_TRIES):
            answer = await self.dispatchers.request("/v1/jobs", body, headers)
            if answer is not None and answer.status_code == 202:
                return str(answer.json()["id"])
            if answer is not None and answer.status_code not in (429, 503):
                raise RuntimeError(f"submission refused: {answer.status_code} {answer.text}")
            self.refused_submissions += 1
            retry_after = answer.headers.get("retry-after", "1") if answer is not None else "1"
            await asyncio.sleep(float(retry_after))
        raise RuntimeError(f"submission refused {SUBMIT_TRIES} times")

    async def _tenant_keys(self) -> list[str]:
        """An API key of each tenant (``t0000``, ``t0001`` ...), member role, and the
        operator's (admin), which the scheduler's calls carry."""
        keys = []
        for n in range(self.deployment.tenants):
            keys.append(await self._key(f"t{n:04d}", Role.MEMBER))
        if self.deployment.tenants:
            self._operator = {"X-API-Key": await self._key("default", Role.ADMIN)}
        return keys

    async def _key(self, tenant: str, role: Role) -> str:
        key, digest = generate_api_key()
        record = ApiKeyRecord(f"key_{digest[:12]}", digest, tenant, role, "scale", START)
        await self.ports.api_keys.add(record)
        return key

    async def call(
        self, path: str, body: dict[str, Any] | None = None, tenant: int | None = None
    ) -> dict[str, Any]:
        """A request through the dispatcher service, as a tenant (or the operator); its JSON
        answer, or an error naming what was refused."""
        headers = self._operator if tenant is None else {"X-API-Key": self.keys[tenant]}
        answer = await self.dispatchers.request(path, body or {}, headers)
        if answer is None or answer.status_code >= 400:
            why = "timed out" if answer is None else f"{answer.status_code} {answer.text}"
            raise RuntimeError(f"{path} refused: {why}")
        result: dict[str, Any] = answer.json()
        return result

    async def _scheduling(self, path: str, every_s: float) -> None:
        """Cloud Scheduler's calls of ``path``, every ``every_s`` from the start."""
        while True:
            await asyncio.sleep(every_s)
            done = await self._scheduled_call(path)
            if path == RECONCILE_PATH:
                self.reconciled += int(done.get("batches", 0))

    async def _scheduled_call(self, path: str) -> dict[str, Any]:
        """A Cloud Scheduler call: one refused is recorded, and the schedule goes on (its next
        call comes at its time, as Cloud Scheduler's does)."""
        try:
            return await self.call(path)
        except RuntimeError as refused:
            self.scheduler_failures.append(f"{self.clock.now_s:.0f} s: {refused}")
            return {}

    async def drain(self, job_ids: Sequence[str], timeout_s: float, poll_s: float = 1.0) -> float:
        """Wait until every job ends, or ``timeout_s`` passes, or no page has ended for
        ``STALLED_S`` (stuck: the table shows what is left); the simulated seconds it took."""
        began = last_progress = self.clock.now_s
        waiting, ended = set(job_ids), -1
        while waiting and self.clock.now_s - began < timeout_s:
            await asyncio.sleep(poll_s)
            for job_id in list(waiting):
                job = await self.ports.twins.store.get_job(job_id)
                if job is not None and job.status.terminal:
                    waiting.discard(job_id)
            now_ended = self._ended(waiting)
            if now_ended != ended:
                ended, last_progress = now_ended, self.clock.now_s
            elif self.clock.now_s - last_progress > STALLED_S:
                self.stalled = True
                break
        return self.clock.now_s - began

    def _ended(self, job_ids: set[str]) -> int:
        batches = self.ports.twins.store.batches
        return sum(
            1
            for job_id in job_ids
            for batch in batches.get(job_id, {}).values()
            for item in batch.items
            if item.status.terminal
        )
