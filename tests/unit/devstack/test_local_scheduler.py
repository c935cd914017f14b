"""The local stack's scheduler in api_key mode: it calls the maintenance endpoints with a
scheduler key of its own, which a real dispatcher (uvicorn, api_key mode) accepts for them and
for nothing else; a key the dispatcher does not accept is said, once per endpoint."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import uvicorn

from scrapejobs_devstack.local_scheduler import LocalScheduler, ScheduledCall
from scrapejobs_devstack.processes import free_port
from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from support.memory_dispatcher import memory_dispatcher

KEY = "sj_local_scheduler_test-key"


@pytest.fixture
def dispatcher_url() -> Iterator[str]:
    settings = DispatcherSettings(
        auth_mode="api_key", scheduler_key_hashes=hashlib.sha256(KEY.encode()).hexdigest()
    )
    app = memory_dispatcher(MemoryJobStore(), settings)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            httpx.get(f"{url}/healthz", timeout=1)
            break
        except httpx.HTTPError:
            time.sleep(0.05)
    yield url
    server.should_exit = True
    thread.join(timeout=10)


def run_once(url: str, api_key: str | None) -> list[str]:
    told: list[str] = []
    answered: list[dict[str, object]] = []

    def tick(answer: dict[str, object]) -> None:
        answered.append(answer)
        return None

    call = ScheduledCall("/v1/maintenance/monitors", 0.1, tick)
    scheduler = LocalScheduler(url, [call], tell=told.append, api_key=api_key).start()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not (answered and (told or api_key == KEY)):
        time.sleep(0.05)
    scheduler.stop()
    return told if api_key != KEY else [f"answered {len(answered) and answered[0]}"]


def test_the_local_scheduler_calls_with_its_own_key(dispatcher_url: str) -> None:
    [answered] = run_once(dispatcher_url, KEY)
    assert "'due': 0" in answered  # the tick ran
    # the scheduler key does nothing else
    jobs = httpx.get(f"{dispatcher_url}/v1/jobs", headers={"X-API-Key": KEY})
    assert jobs.status_code == 403


def test_a_refused_call_is_said_once(dispatcher_url: str) -> None:
    told = run_once(dispatcher_url, "sj_not-the-key")
    assert len(told) == 1 and "refused /v1/maintenance/monitors (401)" in told[0]
