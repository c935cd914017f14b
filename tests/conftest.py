"""Session fixtures: a real local site, and the real stack (emulators + both services)."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from scrapejobs_devstack.processes import free_port
from scrapejobs_devstack.stack import Stack, StackConfig
from scrapejobs_shared.adapters.firestore.job_store import FirestoreJobStore
from scrapejobs_shared.messaging.topology import DEFAULT_TOPOLOGY
from support.site import Site

# Short timings so retries and dead-lettering happen within seconds.
TEST_TOPOLOGY = dataclasses.replace(
    DEFAULT_TOPOLOGY, min_backoff_s=1, max_backoff_s=2, ack_deadline_s=20
)
TEST_WORKER_ENV = {
    "SCRAPEJOBS_FETCH_TIMEOUT_S": "4",
    "SCRAPEJOBS_LEASE_MARGIN_S": "1",
    # Every test shares one site (one host): a URL that always fails dead-letters after its
    # attempts before its host's circuit breaker opens, so it does not pause the next tests.
    "SCRAPEJOBS_BREAKER_FAILURE_THRESHOLD": str(TEST_TOPOLOGY.max_delivery_attempts + 1),
}


@pytest.fixture(scope="session")
def site() -> Iterator[Site]:
    site = Site().start()
    yield site
    site.stop()


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    config = StackConfig(
        project_id="scrapejobs-test",
        dispatcher_port=free_port(),
        worker_port=free_port(),
        pubsub_port=free_port(),
        firestore_port=free_port(),
        log_dir=tmp_path_factory.mktemp("stack-logs"),
        topology=TEST_TOPOLOGY,
        worker_env=TEST_WORKER_ENV,
    )
    stack = Stack(config)
    saved = dict(os.environ)
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()
        os.environ.clear()
        os.environ.update(saved)
        _dump_logs_on_failure(config.log_dir)


def _dump_logs_on_failure(log_dir: Path) -> None:
    if os.environ.get("SCRAPEJOBS_TEST_SHOW_LOGS"):
        for log in sorted(log_dir.glob("*.log")):
            sys.stderr.write(f"==== {log.name}\n{log.read_text(errors='replace')[-5000:]}\n")


@pytest.fixture
async def api(stack: Stack) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=stack.config.dispatcher_url, timeout=30) as client:
        yield client


@pytest.fixture
async def store(stack: Stack) -> AsyncIterator[FirestoreJobStore]:
    store = FirestoreJobStore.connect(stack.config.project_id, "(default)")
    yield store
    store.close()
