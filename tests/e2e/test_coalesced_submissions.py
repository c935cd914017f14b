"""Coalesced submissions on the real stack (emulators, both services, a local site): one-URL
jobs submitted together share commits and messages, yet each is a job of its own with exact
counts; a dispatcher SIGKILLed inside a coalescing window loses no job it answered, and a
client it never answered retries with its Idempotency-Key and gets one job."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Any

import httpx
import pytest

from support.jobs import PRODUCT_FIELDS, all_results, wait_finished

pytestmark = [pytest.mark.emulators, pytest.mark.stack]

CONCURRENT = 200


def coalesced_groups(stack: Any) -> list[int]:
    """Jobs per coalesced commit, from the dispatcher's log."""
    groups = []
    for line in stack.dispatcher.log_path.read_text().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("message") == "submissions coalesced":
            groups.append(int(entry["jobs"]))
    return groups


async def test_concurrent_one_url_jobs_are_each_a_job_with_exact_counts(api, site, stack) -> None:
    before = len(coalesced_groups(stack))
    urls = [f"{site.url}/product/{n}" for n in range(1, CONCURRENT + 1)]
    responses = await asyncio.gather(
        *(api.post("/v1/jobs", json={"url": url, "extract": PRODUCT_FIELDS}) for url in urls)
    )
    assert [r.status_code for r in responses] == [202] * CONCURRENT
    ids = [r.json()["id"] for r in responses]
    assert len(set(ids)) == CONCURRENT
    groups = coalesced_groups(stack)[before:]
    assert sum(groups) == CONCURRENT and max(groups) > 1, groups  # commits were shared

    finished = [await wait_finished(api, job_id) for job_id in ids]  # they run meanwhile
    for n, (url, job) in enumerate(zip(urls, finished, strict=True), start=1):
        assert job["total"] == 1 and job["counts"]["succeeded"] == 1, job
        [result] = await all_results(api, job["id"])
        assert result["url"] == url and result["data"]["title"] == f"Product {n}"


async def _post(api: httpx.AsyncClient, body: dict[str, Any], key: str) -> httpx.Response | None:
    """The answer, or None when the dispatcher went away before answering."""
    try:
        return await api.post("/v1/jobs", json=body, headers={"Idempotency-Key": key})
    except httpx.TransportError:
        return None


async def _retry(api: httpx.AsyncClient, body: dict[str, Any], key: str) -> httpx.Response:
    """A client's retry: while the key reads in flight (409), wait and try again."""
    deadline = time.monotonic() + 60
    while True:
        response = await api.post("/v1/jobs", json=body, headers={"Idempotency-Key": key})
        if response.status_code != 409:
            return response
        assert time.monotonic() < deadline, response.text
        await asyncio.sleep(0.5)


async def _jobs_labelled(api: httpx.AsyncClient, run: str, pages: int = 20) -> list[str]:
    found, token = [], None
    for _ in range(pages):
        params: dict[str, Any] = {"page_size": 100}
        if token:
            params["page_token"] = token
        page = (await api.get("/v1/jobs", params=params)).json()
        found += [job["id"] for job in page["jobs"] if job["labels"].get("run") == run]
        token = page.get("next_page_token")
        if not token:
            break
    return found


async def test_a_dispatcher_killed_inside_a_coalescing_window_loses_no_answered_job(
    site, stack
) -> None:
    saved = dict(stack.config.dispatcher_env)
    stack.config.dispatcher_env.update(
        {
            "SCRAPEJOBS_COALESCE_WINDOW_MS": "100",
            "SCRAPEJOBS_COALESCE_BUSY_WINDOW_MS": "1000",  # the kill lands inside it
            "SCRAPEJOBS_IDEMPOTENCY_STALE_S": "2",
        }
    )
    run = uuid.uuid4().hex[:12]
    bodies = {
        f"{run}-{n}": {
            "url": f"{site.url}/product/{300 + n}",
            "extract": PRODUCT_FIELDS,
            "labels": {"run": run},
        }
        for n in range(60)
    }
    keys = list(bodies)
    try:
        stack.dispatcher.kill()
        stack.start_dispatcher()
        async with httpx.AsyncClient(base_url=stack.config.dispatcher_url, timeout=30) as api:
            answered = await asyncio.gather(*(_post(api, bodies[k], k) for k in keys[:30]))
            late = [asyncio.ensure_future(_post(api, bodies[k], k)) for k in keys[30:]]
            await asyncio.sleep(0.3)  # inside the busy window: nothing of it committed yet
            stack.dispatcher.kill()
            unanswered = await asyncio.gather(*late)
        assert all(r is not None and r.status_code == 202 for r in answered)
        assert all(r is None for r in unanswered), "the kill came after the window closed"
        got = {k: r.json()["id"] for k, r in zip(keys, answered, strict=False) if r is not None}

        stack.start_dispatcher()
        async with httpx.AsyncClient(base_url=stack.config.dispatcher_url, timeout=30) as api:
            retried = {k: await _retry(api, bodies[k], k) for k in keys}
            assert all(r.status_code == 202 for r in retried.values())
            ids = {k: r.json()["id"] for k, r in retried.items()}
            assert all(ids[k] == job_id for k, job_id in got.items())  # the answered job
            assert all(retried[k].headers.get("idempotent-replayed") == "true" for k in got)
            assert sorted(await _jobs_labelled(api, run)) == sorted(ids.values())  # one each

            deadline = time.monotonic() + 120
            for job_id in ids.values():
                while (job := (await api.get(f"/v1/jobs/{job_id}")).json())["status"] != (
                    "completed"
                ):
                    assert time.monotonic() < deadline, job
                    await api.post("/v1/maintenance/republish", params={"older_than_s": 1})
                    await asyncio.sleep(0.5)
                assert job["total"] == 1 and job["counts"]["succeeded"] == 1, job
    finally:
        stack.config.dispatcher_env.clear()
        stack.config.dispatcher_env.update(saved)
        if stack.dispatcher is not None and stack.dispatcher.alive():
            stack.dispatcher.kill()
        stack.start_dispatcher()
