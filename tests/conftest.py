"""Session fixtures: a real local site, and the real stack (emulators + both services)."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from scrapejobs_devstack.local_proxy import LocalProxy
from scrapejobs_devstack.processes import free_port
from scrapejobs_devstack.stack import Stack, StackConfig
from scrapejobs_devstack.topology_bootstrap import EMULATOR_TOPOLOGY
from scrapejobs_shared.adapters.firestore.job_store import FirestoreJobStore
from support.site import Site

# Short timings so retries and dead-lettering happen within seconds (the emulator retries a
# failed push after 1 s: topology_bootstrap.py).
TEST_TOPOLOGY = dataclasses.replace(EMULATOR_TOPOLOGY, ack_deadline_s=20)
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
def stack_proxies(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, LocalProxy]]:
    """The stack's proxy pools: a German HTTP proxy and an American SOCKS5 one (real proxies on
    loopback, scrapejobs_devstack/local_proxy.py); a job asking for no proxy goes direct."""
    log_dir = tmp_path_factory.mktemp("proxy-logs")
    started: dict[str, LocalProxy] = {}
    try:
        for country in ("DE", "US"):
            started[country] = LocalProxy(log_dir).start()
        yield started
    finally:
        for proxy in started.values():
            proxy.stop()


def pools(proxies: dict[str, LocalProxy]) -> str:
    schemes = {"DE": "http", "US": "socks5"}
    return json.dumps(
        [{"url": p.url(schemes[c]), "country": c} for c, p in sorted(proxies.items())]
    )


@pytest.fixture(scope="session")
def stack(
    tmp_path_factory: pytest.TempPathFactory, stack_proxies: dict[str, LocalProxy]
) -> Iterator[Stack]:
    proxied = {"SCRAPEJOBS_PROXIES": pools(stack_proxies)}
    config = StackConfig(
        project_id="scrapejobs-test",
        dispatcher_port=free_port(),
        worker_port=free_port(),
        renderer_port=free_port(),
        pubsub_port=free_port(),
        firestore_port=free_port(),
        storage_port=free_port(),
        log_dir=tmp_path_factory.mktemp("stack-logs"),
        topology=TEST_TOPOLOGY,
        worker_env={**TEST_WORKER_ENV, **proxied},  # the renderer's too
        dispatcher_env=proxied,
        # a page rendered on this 2-core machine beside the rest of the suite takes 1-3 s
        renderer_env={"SCRAPEJOBS_FETCH_TIMEOUT_S": "15"},
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


@pytest.fixture(autouse=True)
def _service_log_marks(request: pytest.FixtureRequest) -> Iterator[None]:
    """Where each service log ends before a stack test, so a failure can show what the
    services logged while it ran (CI keeps no log files)."""
    if "stack" not in request.fixturenames:
        yield
        return
    log_dir: Path = request.getfixturevalue("stack").config.log_dir
    services = [log for log in log_dir.glob("*.log") if "emulator" not in log.name]
    request.node.stash[_LOG_MARKS] = {log: log.stat().st_size for log in services}
    yield


_LOG_MARKS = pytest.StashKey[dict[Path, int]]()


def _worth_showing(line: str) -> bool:
    """Errors in the JSON log, and uvicorn's own lines (tracebacks, requests answered 5xx)."""
    if line.startswith("{"):
        return '"severity": "ERROR"' in line or '"severity": "CRITICAL"' in line
    return not line.startswith("INFO:") or '" 5' in line


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report = yield
    marks = item.stash.get(_LOG_MARKS, None)
    if report.failed and marks:
        for log, start in marks.items():
            with log.open("rb") as file:
                file.seek(start)
                lines = file.read().decode(errors="replace").splitlines()
            shown = [line for line in lines if _worth_showing(line)]
            if shown:
                report.sections.append((f"{log.stem} log (errors)", "\n".join(shown[-60:])))
    return report


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
