"""Dead letters on the real stack: a URL that fails until it is switched on dead-letters, is
listed with its error, is replayed after the switch and succeeds; counts stay exact and a
second replay replays nothing. A job's failed tasks can be retried the same way."""

from __future__ import annotations

import time

import pytest

from support.jobs import PRODUCT_FIELDS, all_results, submit, wait_finished
from support.site import Site

pytestmark = [pytest.mark.emulators, pytest.mark.stack]


async def test_a_dead_letter_is_listed_replayed_and_succeeds(api, site, stack) -> None:
    urls = [f"{site.url}/switch/dlq-a", f"{site.url}/product/11"]
    job = await submit(api, {"urls": urls, "extract": PRODUCT_FIELDS})
    first = await wait_finished(api, job["id"], timeout_s=120)
    assert first["status"] == "completed"
    assert first["counts"]["dead_lettered"] == 1 and first["counts"]["succeeded"] == 1

    listed = (await api.get("/v1/dead-letters", params={"job_id": job["id"]})).json()
    [letter] = listed["dead_letters"]
    assert letter["url"] == urls[0] and letter["error"] == "HTTP 500"
    assert letter["attempts"] == stack.config.topology.max_delivery_attempts
    by_host = (await api.get("/v1/dead-letters", params={"host": site.url + "/"})).json()
    assert letter["task_id"] in {d["task_id"] for d in by_host["dead_letters"]}

    site.switched_on.add("dlq-a")
    replay = await api.post("/v1/dead-letters:replay", json={"job_id": job["id"]})
    assert replay.status_code == 200 and replay.json() == {"replayed": 1}
    again = await api.post("/v1/dead-letters:replay", json={"job_id": job["id"]})
    assert again.json() == {"replayed": 0}

    final = await wait_finished(api, job["id"], timeout_s=60)
    assert final["status"] == "completed"
    assert final["counts"]["succeeded"] == 2 and final["counts"]["dead_lettered"] == 0
    results = {r["url"]: r for r in await all_results(api, job["id"])}
    assert results[urls[0]]["status"] == "succeeded" and results[urls[0]]["replays"] == 1
    assert results[urls[0]]["attempts"] == 1 and results[urls[0]]["data"]["title"] == "Product 9"
    left = (await api.get("/v1/dead-letters", params={"job_id": job["id"]})).json()
    assert left["dead_letters"] == []


async def test_retry_runs_a_job_s_failed_tasks_again(api, site) -> None:
    urls = [f"{site.url}/status/404/retry", f"{site.url}/product/12"]
    job = await submit(api, {"urls": urls, "extract": PRODUCT_FIELDS})
    assert (await wait_finished(api, job["id"]))["counts"]["failed"] == 1

    retried = await api.post(f"/v1/jobs/{job['id']}:retry", params={"status": "failed"})

    assert retried.status_code == 200 and retried.json() == {"replayed": 1}
    final = await wait_finished(api, job["id"])
    assert final["counts"]["failed"] == 1 and final["total"] == 2  # still a 404
    assert site.count("/status/404/retry") == 2
    unknown = await api.post("/v1/jobs/0123456789abcdef:retry")
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"
    bad = await api.post(f"/v1/jobs/{job['id']}:retry", params={"status": "succeeded"})
    assert bad.status_code == 422


async def test_a_replay_closes_the_open_breaker_so_the_mended_site_is_tried_at_once(
    api, stack
) -> None:
    """A site of its own (its own host key): a URL failing all its attempts dead-letters, one
    more failure opens the host's breaker (the suite's threshold is one more than the attempts),
    and after the site is mended the replay completes within 20 s, not after the cooldown."""
    mended = Site().start()
    try:
        broken = f"{mended.url}/switch/breaker"
        letter_job = await submit(api, {"url": broken, "extract": PRODUCT_FIELDS})
        first = await wait_finished(api, letter_job["id"], timeout_s=120)
        assert first["counts"]["dead_lettered"] == 1
        last_straw = await submit(
            api, {"url": f"{mended.url}/switch/straw", "options": {"max_attempts": 1}}
        )
        assert (await wait_finished(api, last_straw["id"]))["counts"]["failed"] == 1
        host = (await api.get("/v1/hosts", params={"url": broken})).json()
        assert host["paused"] is True and host["circuit_open_until"], host
        assert host["host"] == mended.url

        mended.switched_on.add("breaker")
        started = time.monotonic()
        replay = await api.post("/v1/dead-letters:replay", json={"host": mended.url})
        assert replay.json() == {"replayed": 1}
        final = await wait_finished(api, letter_job["id"], timeout_s=20)
        assert time.monotonic() - started < 20
        assert final["counts"]["succeeded"] == 1
        after = (await api.get("/v1/hosts", params={"url": broken})).json()
        assert after["paused"] is False and after["circuit_open_until"] is None
    finally:
        mended.stop()
