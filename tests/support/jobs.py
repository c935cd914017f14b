"""Helpers for driving jobs through the real dispatcher."""

from __future__ import annotations

import asyncio
import base64
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import httpx

from scrapejobs_shared.delivery.batching import plan_batches, shards_for
from scrapejobs_shared.domain.jobspec import JobRequest, JobSpec
from scrapejobs_shared.domain.records import BatchItem, BatchRecord, JobRecord, task_id_for
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.messaging.task_message import BatchMessage

PRODUCT_FIELDS = {
    "title": {"css": "h1.title::text"},
    "price": {"css": "p.price span::text"},
    "sku": {"xpath": "//p[@class='price']/@data-sku"},
    "tags": {"css": "li.tag::text", "all": True},
    "missing": {"css": "h2.nope::text", "default": "n/a"},
}


T = TypeVar("T")


async def submit(api: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    response = await api.post("/v1/jobs", json=body)
    assert response.status_code == 202, response.text
    job: dict[str, Any] = response.json()
    assert response.headers["location"] == f"/v1/jobs/{job['id']}"
    return job


async def wait_finished(
    api: httpx.AsyncClient, job_id: str, timeout_s: float = 120.0
) -> dict[str, Any]:
    """Poll until the job is completed/cancelled and no task is open; check counts add up."""
    deadline = time.monotonic() + timeout_s
    job: dict[str, Any] = {}
    while time.monotonic() < deadline:
        job = (await api.get(f"/v1/jobs/{job_id}")).json()
        open_tasks = job["counts"]["queued"] + job["counts"]["running"]
        if job["status"] in ("completed", "cancelled") and open_tasks == 0:
            assert sum(job["counts"].values()) == job["total"]
            assert set(job["counts"]) == {s.value for s in TaskStatus}
            return job
        await asyncio.sleep(0.3)
    raise AssertionError(f"job {job_id} did not finish: {job}")


async def stats_when(
    read: Callable[[], Awaitable[T]], ready: Callable[[T], bool], timeout_s: float = 10.0
) -> T:
    """``read()``'s answer once ``ready`` says it is (else its last, when ``timeout_s`` ran
    out; the caller's assertions then say what it is): a process writes its statistics
    within about a second of a job's end, not in the commit that ends it
    (delivery/stats_buffer.py)."""
    deadline = time.monotonic() + timeout_s
    while True:
        answer = await read()
        if ready(answer) or time.monotonic() > deadline:
            return answer
        await asyncio.sleep(0.2)


STILL_S = 2.5  # longer than a process's statistics interval (SCRAPEJOBS_STATS_EVERY_S, 1.5 s)


def steady(read: Callable[[], T], timeout_s: float = 30.0) -> T:
    """``read()``'s answer once it has stood still for ``STILL_S``, so the statistics of jobs
    that ended before are in: a figure read before a job, on a stack other tests share, is then
    not moved later by theirs."""
    deadline = time.monotonic() + timeout_s
    last, since = read(), time.monotonic()
    while time.monotonic() - since < STILL_S:
        assert time.monotonic() < deadline, f"still moving after {timeout_s} s: {last!r}"
        time.sleep(0.5)
        if (now := read()) != last:
            last, since = now, time.monotonic()
    return last


async def steady_async(read: Callable[[], Awaitable[T]], timeout_s: float = 30.0) -> T:
    """``steady`` for an async ``read``."""
    deadline = time.monotonic() + timeout_s
    last, since = await read(), time.monotonic()
    while time.monotonic() - since < STILL_S:
        assert time.monotonic() < deadline, f"still moving after {timeout_s} s: {last!r}"
        await asyncio.sleep(0.5)
        if (now := await read()) != last:
            last, since = now, time.monotonic()
    return last


async def usage_after(
    api: httpx.AsyncClient, before: dict[str, Any], field: str, timeout_s: float = 10.0
) -> dict[str, Any]:
    """The first tenant's usage row once ``field`` moved past ``before``'s."""

    async def row() -> dict[str, Any]:
        first: dict[str, Any] = (await api.get("/v1/usage")).json()["usage"][0]
        return first

    return await stats_when(row, lambda now: now[field] != before[field], timeout_s)


async def all_results(
    api: httpx.AsyncClient, job_id: str, page_size: int = 100
) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    token = None
    while True:
        params: dict[str, Any] = {"page_size": page_size}
        if token:
            params["page_token"] = token
        page = (await api.get(f"/v1/jobs/{job_id}/results", params=params)).json()
        results.extend(page["results"])
        token = page["next_page_token"]
        if not token:
            return results


def push_envelope(
    job_id: str, batch_id: str, tasks: list[tuple[str, str]], message_id: str = "m-1"
) -> dict[str, Any]:
    """A Pub/Sub push body carrying one batch: ``tasks`` are (task id, url) pairs."""
    data = json.dumps(
        {"job_id": job_id, "batch_id": batch_id, "tasks": [{"id": i, "url": u} for i, u in tasks]}
    ).encode()
    return {
        "message": {
            "data": base64.b64encode(data).decode(),
            "attributes": {},
            "messageId": message_id,
            "publishTime": "2026-01-01T00:00:00Z",
        },
        "subscription": "projects/scrapejobs-test/subscriptions/scrape-tasks-push",
    }


def envelope_for(
    message: BatchMessage, attributes: dict[str, str], message_id: str = "m-1"
) -> dict[str, Any]:
    """The push body Pub/Sub would send for a published message (and its attributes)."""
    return {
        "message": {
            "data": base64.b64encode(message.encode()).decode(),
            "attributes": attributes,
            "messageId": message_id,
            "publishTime": "2026-01-01T00:00:00Z",
        },
        "subscription": "projects/scrapejobs-test/subscriptions/scrape-tasks-push",
    }


def envelope_of(batch: BatchRecord, message_id: str = "m-1") -> dict[str, Any]:
    return push_envelope(
        batch.job_id, batch.id, [(i.task_id, i.url) for i in batch.items], message_id
    )


async def write_job_directly(
    store: Any,
    urls: list[str],
    options: dict[str, Any] | None = None,
    *,
    age: timedelta = timedelta(0),
    publishing: bool = False,
    batch_size: int = 50,
) -> tuple[str, list[BatchRecord]]:
    """A job and its batches written straight to Firestore, never published to Pub/Sub: for
    driving the worker's push endpoint directly, or simulating a stopped submission."""
    created = datetime.now(UTC) - age
    job_id = uuid.uuid4().hex
    body = {"url": urls[0], "extract": PRODUCT_FIELDS, "options": options or {}}
    spec = JobSpec.from_request(JobRequest.model_validate(body))
    expire = created + timedelta(days=1)
    items = [BatchItem(task_id_for(job_id, str(i)), url, index=i) for i, url in enumerate(urls)]
    batches = plan_batches(job_id, items, batch_size, created, expire)
    job = JobRecord(
        job_id,
        JobStatus.QUEUED,
        spec,
        created,
        created,
        expire,
        total=len(urls),
        publishing=publishing,
        counter_shards=shards_for(len(batches)),
    )
    await store.create_job(job, batches)
    return job_id, batches
