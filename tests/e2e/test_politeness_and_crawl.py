"""Crawl jobs, robots.txt, Retry-After and per-host concurrency across worker processes."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from scrapejobs_devstack.processes import free_port
from support.jobs import all_results, envelope_of, submit, wait_finished, write_job_directly

pytestmark = [pytest.mark.emulators, pytest.mark.stack]

EXPECTED_CRAWL = ["/crawl/", "/crawl/a", "/crawl/b", "/crawl/a/1", "/crawl/a/2", "/crawl/b/1"]


def _path(url: str) -> str:
    return "/" + url.split("://", 1)[1].split("/", 1)[1]


async def test_crawl_fetches_exactly_the_expected_pages_once(api, site) -> None:
    before = {path: site.count(path) for path in [*EXPECTED_CRAWL, "/crawl/a/1/deep"]}
    crawl = {
        "start_url": f"{site.url}/crawl/",
        "max_depth": 2,
        "include": ["^/crawl/"],
        "exclude": ["/private/"],
    }
    job = await submit(api, {"crawl": crawl, "extract": {"title": {"css": "title::text"}}})
    assert job["total"] == 1

    final = await wait_finished(api, job["id"])

    results = await all_results(api, job["id"])
    assert sorted(_path(r["url"]) for r in results) == sorted(EXPECTED_CRAWL)
    assert final["total"] == 6 and final["counts"]["succeeded"] == 6
    assert {r["data"]["title"] for r in results} == set(EXPECTED_CRAWL)
    for path in EXPECTED_CRAWL:
        assert site.count(path) - before[path] == 1, f"{path} fetched more than once"
    assert site.count("/crawl/a/1/deep") == before["/crawl/a/1/deep"]
    assert site.count("/crawl/private/x") == 0


async def test_crawl_respects_the_page_budget(api, site) -> None:
    crawl = {"start_url": f"{site.url}/crawl/", "max_depth": 5, "max_pages": 3}
    job = await submit(api, {"crawl": crawl})
    final = await wait_finished(api, job["id"])
    assert final["total"] == 3 and final["counts"]["succeeded"] == 3


async def test_invalid_crawl_regex_is_rejected(api, site) -> None:
    body = {"crawl": {"start_url": f"{site.url}/crawl/", "include": ["(unclosed"]}}
    response = await api.post("/v1/jobs", json=body)
    assert response.status_code == 422 and response.json()["error"]["field"] == "crawl.include"


async def test_robots_disallowed_page_is_never_fetched(api, site) -> None:
    job = await submit(api, {"url": f"{site.url}/robots-private/secret"})
    await wait_finished(api, job["id"])
    [result] = await all_results(api, job["id"])
    assert result["status"] == "failed" and result["error"] == "robots_disallowed"
    assert site.count("/robots-private/secret") == 0


async def test_retry_after_spacing_is_honoured_and_not_an_attempt(api, site) -> None:
    job = await submit(api, {"url": f"{site.url}/throttle/spacing?after=3"})
    await asyncio.sleep(1)
    host = (await api.get("/v1/hosts", params={"url": site.url})).json()
    assert host["paused"] is True and host["next_request_at"]

    await wait_finished(api, job["id"], timeout_s=60)

    [result] = await all_results(api, job["id"])
    assert result["status"] == "succeeded" and result["attempts"] == 1
    first, second = site.times["/throttle/spacing"]
    assert second - first >= 2.9, "the second request came before Retry-After"


@pytest.fixture
async def second_worker(stack):
    port = free_port()
    config = stack.config
    process = stack._service(
        "worker-2",
        "scrapejobs_worker",
        port,
        {
            **stack.emulator_env(),
            "SCRAPEJOBS_PUSH_AUTH": "none",
            "SCRAPEJOBS_FETCH_ALLOWLIST": "127.0.0.0/8",
            **config.worker_env,
        },
    )
    yield f"http://127.0.0.1:{port}"
    process.stop()


async def test_per_host_concurrency_holds_across_worker_processes(
    api, site, stack, store, second_worker
) -> None:
    urls = [f"{site.url}/conc/{i}?s=0.4" for i in range(24)]
    job_id, batches = await write_job_directly(
        store, urls, {"per_host_concurrency": 3}, batch_size=4
    )
    site.max_in_flight = 0
    workers = [stack.config.worker_url, second_worker]
    async with httpx.AsyncClient(timeout=60) as client:
        responses = await asyncio.gather(
            *(
                client.post(
                    f"{workers[i % 2]}/pubsub/push",
                    json=envelope_of(batch, message_id=str(i)),
                )
                for i, batch in enumerate(batches)
            )
        )

    assert all(r.status_code == 204 for r in responses)
    final = await wait_finished(api, job_id, timeout_s=120)
    assert final["counts"]["succeeded"] == 24
    assert 2 <= site.max_in_flight <= 3, site.max_in_flight
    assert all(site.count(f"/conc/{i}") == 1 for i in range(24))


@pytest.fixture
async def two_patient_workers(stack):
    """Two more worker processes on the stack's emulators that keep idle host slots warm for
    10 s (SCRAPEJOBS_WARM_SLOT_IDLE_S): only a fair share can free them sooner."""
    config = stack.config
    urls, processes = [], []
    for name in ("worker-x", "worker-y"):
        port = free_port()
        env = {
            **stack.emulator_env(),
            "SCRAPEJOBS_PUSH_AUTH": "none",
            "SCRAPEJOBS_FETCH_ALLOWLIST": "127.0.0.0/8",
            "SCRAPEJOBS_WARM_SLOT_IDLE_S": "10",
            **config.worker_env,
        }
        processes.append(stack._service(name, "scrapejobs_worker", port, env))
        urls.append(f"http://127.0.0.1:{port}")
    yield urls
    for process in processes:
        process.stop()


async def test_a_waiting_process_gets_the_slots_another_left_idle_within_a_second_or_so(
    api, site, store, two_patient_workers
) -> None:
    """Worker x runs a batch and keeps its 4 slots of the host warm (for 10 s, were it alone);
    worker y's batch of the same host waits for them. y says it waits, x sees it at its next
    look and gives the idle slots back: y's batch is done in about a second, not 10, and the
    site never sees more than the cap in flight."""
    await asyncio.sleep(1.5)  # slots earlier tests left warm on this host lapse
    urls = [f"{site.url}/conc/fair-{i}?s=0.05" for i in range(8)]
    job_id, batches = await write_job_directly(
        store, urls, {"per_host_concurrency": 4}, batch_size=4
    )
    x, y = two_patient_workers
    site.max_in_flight = 0
    async with httpx.AsyncClient(timeout=60) as client:
        first = await client.post(f"{x}/pubsub/push", json=envelope_of(batches[0], "fair-1"))
        assert first.status_code == 204
        loop = asyncio.get_running_loop()
        started = loop.time()
        second = await client.post(f"{y}/pubsub/push", json=envelope_of(batches[1], "fair-2"))
        took = loop.time() - started
    assert second.status_code == 204
    final = await wait_finished(api, job_id, timeout_s=30)
    assert final["counts"]["succeeded"] == 8
    # x's look (every 0.5 s) + 0.3 s contended idle + y's ask (every 0.5 s at most) + fetches
    assert took < 4.0, f"y waited {took:.1f} s for slots x held idle"
    assert site.max_in_flight <= 4, site.max_in_flight
