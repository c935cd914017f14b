"""Firestore or Pub/Sub stops answering (its emulator's process group paused with SIGSTOP,
then resumed with SIGCONT: nothing is lost, requests just get no answer), on a stack of its
own (support/lone_stack) on the suite's emulators.

While it is away every request answers, within the deadline, 503 with Retry-After naming it;
/v1/health says which; afterwards a job that ran through the pause completes exactly, a keyed
submission retried gives one job (the client library does that retry by itself), and both
services' processes are still the ones started."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from scrapejobs_client import Client
from scrapejobs_devstack.stack import Stack
from support.jobs import submit, wait_finished
from support.lone_stack import lone_stack
from support.outage import paused

pytestmark = [pytest.mark.emulators, pytest.mark.stack]

TIMEOUT_S = 3  # each dependency's deadline on this stack (SCRAPEJOBS_*_TIMEOUT_S)
# Every request answers within the deadline plus overheads; a hang meets the client's timeout.
BOUND_S = TIMEOUT_S + 7
PAUSE_S = 10


@pytest.fixture(scope="module")
def outage_stack(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    deadlines = {
        "SCRAPEJOBS_FIRESTORE_TIMEOUT_S": str(TIMEOUT_S),
        "SCRAPEJOBS_PUBSUB_TIMEOUT_S": str(TIMEOUT_S),
    }
    # a reservation that landed after its request gave up is taken over this soon
    dispatcher_env = deadlines | {"SCRAPEJOBS_IDEMPOTENCY_STALE_S": "15"}
    with lone_stack(
        stack,
        "scrapejobs-outages",
        tmp_path_factory.mktemp("outage-logs"),
        dispatcher_env,
        worker_env=deadlines,
    ) as lone:
        yield lone


def _unavailable(response: httpx.Response, dependency: str) -> dict[str, Any]:
    assert response.status_code == 503, (response.request.url, response.text[:300])
    assert int(response.headers["Retry-After"]) >= 1
    if "json" not in response.headers["content-type"]:  # a dashboard page: the banner
        assert f"{dependency} is not answering" in response.text
        return {}
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == "dependency_unavailable" and error["dependency"] == dependency
    assert f"{dependency} did not answer within {TIMEOUT_S} s" in error["message"]
    return error


def _client_submit(base: str, urls: list[str]) -> str:
    with Client(base, timeout_s=BOUND_S) as client:
        return client.submit(urls).id


def _pids(lone: Stack) -> list[int]:
    assert lone.dispatcher is not None and lone.worker is not None
    return [lone.dispatcher.pid, lone.worker.pid]


def _alive(lone: Stack, pids: list[int]) -> None:
    assert _pids(lone) == pids
    assert lone.dispatcher is not None and lone.dispatcher.alive()
    assert lone.worker is not None and lone.worker.alive()


async def _keyed_retry(api: httpx.AsyncClient, body: dict[str, Any], key: str) -> str:
    """The submission retried after the outage, as a client does: a 409 (the first request's
    reservation landed after it gave up) is retried until the reservation goes stale."""
    deadline = time.monotonic() + 60
    while True:
        answer = await api.post("/v1/jobs", json=body, headers={"Idempotency-Key": key})
        if answer.status_code != 409 or time.monotonic() > deadline:
            break
        await asyncio.sleep(2)
    assert answer.status_code == 202, answer.text
    job_id: str = answer.json()["id"]
    return job_id


async def _one_job_done(api: httpx.AsyncClient, job_id: str, total: int) -> None:
    final = await wait_finished(api, job_id, timeout_s=180)
    assert final["total"] == total and final["counts"]["succeeded"] == total, final
    listed = (await api.get("/v1/jobs", params={"page_size": 100})).json()["jobs"]
    assert sum(job["id"] == job_id for job in listed) == 1


async def test_firestore_paused(outage_stack: Stack, site) -> None:
    assert outage_stack.firestore is not None
    base = outage_stack.config.dispatcher_url
    pids = _pids(outage_stack)
    tag = uuid.uuid4().hex[:8]
    # 160 pages of 0.25 s each, 8 at a time: about 5 s of work, running through the pause
    urls = [f"{site.url}/slow/{tag}-{n}?s=0.25" for n in range(160)]
    key, body = f"fs-{tag}", {"urls": [f"{site.url}/product/{n}" for n in range(3)]}
    async with httpx.AsyncClient(base_url=base, timeout=BOUND_S) as api:
        running = await submit(api, {"urls": urls})
        await asyncio.sleep(1.0)
        with paused(outage_stack.firestore.process):
            started = time.monotonic()
            answers = await asyncio.gather(
                api.get(f"/v1/jobs/{running['id']}"),
                api.get(f"/v1/jobs/{running['id']}/results"),
                api.post("/v1/jobs", json=body, headers={"Idempotency-Key": key}),
                api.get("/ui"),
            )
            status, results, submission, dashboard = answers
            _unavailable(status, "Firestore")
            _unavailable(results, "Firestore")
            error = _unavailable(submission, "Firestore")
            assert error["stored"] in (None, False) and "Idempotency-Key" in error["message"]
            _unavailable(dashboard, "Firestore")
            health = (await api.get("/v1/health")).json()
            assert health["status"] == "UNHEALTHY", health
            assert health["checks"]["firestore"]["status"] == "unhealthy", health
            _alive(outage_stack, pids)
            await asyncio.sleep(max(0.0, PAUSE_S - (time.monotonic() - started)))
        _alive(outage_stack, pids)
        await _one_job_done(api, running["id"], len(urls))
        await _one_job_done(api, await _keyed_retry(api, body, key), len(body["urls"]))
        health = (await api.get("/v1/health")).json()
        assert health["checks"]["firestore"]["status"] == "healthy", health
    for n in range(160):  # every page fetched, none for a second time because of the pause
        assert site.count(f"/slow/{tag}-{n}") == 1, n
    _alive(outage_stack, pids)


async def test_pubsub_paused(outage_stack: Stack, site) -> None:
    assert outage_stack.pubsub is not None
    base = outage_stack.config.dispatcher_url
    pids = _pids(outage_stack)
    tag = uuid.uuid4().hex[:8]
    key, body = f"ps-{tag}", {"urls": [f"{site.url}/product/{n}" for n in range(20, 24)]}
    # a crawl whose seed answers slowly: its links are found while Pub/Sub is away
    seed = f"{site.url}/slowlinks/{tag}?s=3&links=6&from=40"
    crawl = {"start_url": seed, "max_depth": 1, "include": ["^/product/", "^/slowlinks/"]}
    async with httpx.AsyncClient(base_url=base, timeout=BOUND_S) as api:
        crawling = await submit(api, {"crawl": crawl})
        deadline = time.monotonic() + 30
        while site.count(f"/slowlinks/{tag}") == 0:  # the seed is being fetched
            assert time.monotonic() < deadline
            await asyncio.sleep(0.1)
        with paused(outage_stack.pubsub.process):
            started = time.monotonic()
            # the client, as a user runs it: it retries the 503 after Retry-After with its key
            client_urls = [f"{site.url}/product/{n}" for n in range(30, 33)]
            by_client = asyncio.ensure_future(asyncio.to_thread(_client_submit, base, client_urls))
            submission = await api.post("/v1/jobs", json=body, headers={"Idempotency-Key": key})
            error = _unavailable(submission, "Pub/Sub")
            assert error["stored"] is True
            stored = (await api.get(f"/v1/jobs/{error['job_id']}")).json()
            assert stored["status"] == "queued" and stored["counts"]["failed"] == 0
            health = (await api.get("/v1/health")).json()
            assert health["checks"]["pubsub"]["status"] == "unhealthy", health
            _alive(outage_stack, pids)
            await asyncio.sleep(max(0.0, PAUSE_S - (time.monotonic() - started)))
        _alive(outage_stack, pids)
        assert await _keyed_retry(api, body, key) == error["job_id"]
        await _one_job_done(api, error["job_id"], len(body["urls"]))
        await _one_job_done(api, crawling["id"], 1 + 6)  # the seed and the pages it found
        await _one_job_done(api, await by_client, len(client_urls))
        health = (await api.get("/v1/health")).json()
        assert health["checks"]["pubsub"]["status"] == "healthy", health
    _alive(outage_stack, pids)
