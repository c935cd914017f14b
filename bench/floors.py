"""Floor runs: what the emulators allow with the least possible worker.

One Pub/Sub and one Firestore emulator (gcloud, free loopback ports) are shared by three runs.
Each run has its own topic, subscription and push endpoint: bench/floor_app.py in its own uvicorn
process, in one of three modes (no-op; one Firestore commit; a batched read of 2 documents +
two commits). Per run:

1. a warm-up batch of ``WARMUP_MESSAGES`` messages is pushed to the app, not measured;
2. the push is switched off (the subscription becomes a pull one) and N messages are published,
   so they wait as a backlog (the Pub/Sub emulator's CPU for this is the ``publish`` figure);
3. the push is switched back on; the run ends when the app has acked N distinct messages.

Throughput is N ÷ (last receipt - first receipt), both recorded by the app. CPU is user+system
of the process trees (app, Pub/Sub emulator, Firestore emulator) from step 3's start to its end,
per message. The stats poll (every ``POLL_S``) costs the app a fraction of a percent.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.stack_run import tree_cpu_s
from scrapejobs_devstack.emulators import Emulator, start_emulators
from scrapejobs_devstack.processes import ManagedProcess, free_port, start_process, wait_http

BENCH_DIR = Path(__file__).resolve().parent
PROJECT_ID = "scrapejobs-floors"
WARMUP_MESSAGES = 100
POLL_S = 0.1
ACK_DEADLINE_S = 60


@dataclass(frozen=True)
class FloorMode:
    key: str  # FLOOR_MODE of bench/floor_app.py
    name: str
    reads: int  # Firestore read RPCs per message
    commits: int  # Firestore commit RPCs per message


MODES = (
    FloorMode("noop", "push no-op", reads=0, commits=0),
    FloorMode("commit", "push + 1 commit", reads=0, commits=1),
    FloorMode("read_2commits", "push + read + 2 commits", reads=1, commits=2),
)


class Started:
    """The processes of the floor runs, stopped by pid (process group) last-in first-out, once."""

    def __init__(self) -> None:
        self._processes: list[ManagedProcess] = []

    def add(self, process: ManagedProcess) -> ManagedProcess:
        self._processes.append(process)
        return process

    def stop(self) -> None:
        while self._processes:
            self._processes.pop().stop()

    def stop_one(self, process: ManagedProcess) -> None:
        if process in self._processes:
            self._processes.remove(process)
            process.stop()


@dataclass
class Emulators:
    pubsub: Emulator
    firestore: Emulator
    publisher: Any  # pubsub_v1.PublisherClient
    subscriber: Any  # pubsub_v1.SubscriberClient


def run_floors(
    messages: int,
    log_dir: Path,
    register: Callable[[str, Callable[[], None]], None],
    timeout_s: float,
) -> list[dict[str, Any]]:
    """Start both emulators, run every mode, stop everything; the figures of each mode.

    ``register`` records the stop action for the caller's cleanup (errors, signals); it is also
    run here when the floors are done, so their processes are gone before anything else runs.
    """
    started = Started()
    register("floor processes", started.stop)
    deadline = time.monotonic() + timeout_s
    try:
        pubsub, firestore = start_emulators(free_port(), free_port(), PROJECT_ID, log_dir)
        started.add(pubsub.process)
        started.add(firestore.process)
        with pubsub_clients(pubsub.host) as (publisher, subscriber):
            emulators = Emulators(pubsub, firestore, publisher, subscriber)
            figures = []
            for mode in MODES:
                print(f"floor: {mode.name}…")
                figures.append(run_floor(mode, messages, emulators, started, log_dir, deadline))
            return figures
    finally:
        started.stop()


@contextlib.contextmanager
def pubsub_clients(host: str) -> Iterator[tuple[Any, Any]]:
    """Publisher and subscriber clients of the emulator at ``host``. The clients read
    ``PUBSUB_EMULATOR_HOST`` when they are made; it is restored at once."""
    from google.cloud import pubsub_v1

    saved = os.environ.get("PUBSUB_EMULATOR_HOST")
    os.environ["PUBSUB_EMULATOR_HOST"] = host
    try:
        publisher = pubsub_v1.PublisherClient()
        subscriber = pubsub_v1.SubscriberClient()
    finally:
        if saved is None:
            del os.environ["PUBSUB_EMULATOR_HOST"]
        else:
            os.environ["PUBSUB_EMULATOR_HOST"] = saved
    try:
        yield publisher, subscriber
    finally:
        subscriber.close()
        publisher.transport.close()


def start_app(mode: FloorMode, firestore_host: str, log_dir: Path) -> tuple[ManagedProcess, str]:
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "uvicorn",
        "floor_app:app",
        "--app-dir",
        str(BENCH_DIR),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-access-log",
        "--log-level",
        "warning",
    ]
    env = {
        "FLOOR_MODE": mode.key,
        "FLOOR_PROJECT": PROJECT_ID,
        "FIRESTORE_EMULATOR_HOST": firestore_host,
        "GOOGLE_CLOUD_PROJECT": PROJECT_ID,
    }
    process = start_process(f"floor-{mode.key}", argv, env, log_dir)
    return process, f"http://127.0.0.1:{port}"


def run_floor(
    mode: FloorMode,
    messages: int,
    emulators: Emulators,
    started: Started,
    log_dir: Path,
    deadline: float,
) -> dict[str, Any]:
    app, url = start_app(mode, emulators.firestore.host, log_dir)
    started.add(app)
    wait_http(f"{url}/stats", app, timeout_s=60)
    subscription = Subscription(emulators, f"floor-{mode.key}", f"{url}/push")
    with httpx.Client(base_url=url, timeout=10.0, trust_env=False) as client:
        subscription.publish(WARMUP_MESSAGES)
        subscription.push(on=True)
        wait_acked(client, app, WARMUP_MESSAGES, deadline)
        subscription.push(on=False)
        client.post("/reset").raise_for_status()

        pids = {
            "app": app.pid,
            "pubsub_emulator": emulators.pubsub.process.pid,
            "firestore_emulator": emulators.firestore.process.pid,
        }
        publish_cpu = tree_cpu_s(pids["pubsub_emulator"])
        subscription.publish(messages)
        publish_cpu = tree_cpu_s(pids["pubsub_emulator"]) - publish_cpu
        cpu_before = {name: tree_cpu_s(pid) for name, pid in pids.items()}
        push_on = time.time()
        subscription.push(on=True)
        stats = wait_acked(client, app, messages, deadline)
        cpu = {name: tree_cpu_s(pid) - cpu_before[name] for name, pid in pids.items()}
    started.stop_one(app)
    return floor_figures(mode, messages, stats, cpu, publish_cpu, push_on)


def floor_figures(
    mode: FloorMode,
    messages: int,
    stats: dict[str, Any],
    cpu: dict[str, float],
    publish_cpu: float,
    push_on: float,
) -> dict[str, Any]:
    span = stats["last"] - stats["first"]
    return {
        "name": mode.name,
        "mode": mode.key,
        "firestore_reads_per_message": mode.reads,
        "firestore_commits_per_message": mode.commits,
        "messages": messages,
        "warmup_messages": WARMUP_MESSAGES,
        "acked": stats["count"],
        "redeliveries": stats["deliveries"] - stats["count"],
        "errors": stats["errors"],
        "span_s": round(span, 3),
        "msgs_per_s": round(messages / span, 2) if span > 0 else None,
        "first_push_after_s": round(stats["first"] - push_on, 3),
        "cpu_s": {name: round(value, 3) for name, value in cpu.items()},
        "cpu_ms_per_message": {name: round(v * 1000 / messages, 3) for name, v in cpu.items()},
        "pubsub_publish_cpu_ms_per_message": round(publish_cpu * 1000 / messages, 3),
    }


class Subscription:
    """A topic and its subscription on the emulator, whose push can be switched off and on."""

    def __init__(self, emulators: Emulators, name: str, endpoint: str) -> None:
        self._publisher = emulators.publisher
        self._subscriber = emulators.subscriber
        self._endpoint = endpoint
        self.topic = self._publisher.topic_path(PROJECT_ID, name)
        self.name = self._subscriber.subscription_path(PROJECT_ID, name)
        self._publisher.create_topic(request={"name": self.topic})
        self._subscriber.create_subscription(
            request={
                "name": self.name,
                "topic": self.topic,
                "push_config": {},  # pull until push(on=True)
                "ack_deadline_seconds": ACK_DEADLINE_S,
            }
        )

    def publish(self, count: int) -> None:
        """``count`` messages shaped like the dispatcher's task messages; waits for all."""
        futures = [
            self._publisher.publish(
                self.topic,
                b'{"job_id":"floor-job","task_id":"t%06d","url":"http://127.0.0.1/product/%06d"}'
                % (i, i),
            )
            for i in range(count)
        ]
        for future in futures:
            future.result(timeout=60)

    def push(self, on: bool) -> None:
        config = {"push_endpoint": self._endpoint} if on else {}
        self._subscriber.modify_push_config(
            request={"subscription": self.name, "push_config": config}
        )


def wait_acked(
    client: httpx.Client, app: ManagedProcess, count: int, deadline: float
) -> dict[str, Any]:
    """Poll the app's stats until it has acked ``count`` distinct messages."""
    while True:
        if not app.alive():
            raise RuntimeError(f"{app.name} exited during its floor run")
        stats: dict[str, Any] = client.get("/stats").json()
        if stats["count"] >= count:
            return stats
        if time.monotonic() > deadline:
            raise TimeoutError(f"{app.name}: {stats['count']} of {count} messages acked")
        time.sleep(POLL_S)
