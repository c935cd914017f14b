"""The dashboard's routes over the in-memory adapters: pages render, an unknown job or a bad
page link is an HTML error page, replays need htmx's header and replay exactly what they say,
and /ui sits behind the API's authentication."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import httpx

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_dispatcher.tenants.api_keys import hash_api_key
from scrapejobs_shared.adapters.memory.file_store import MemoryFileStore
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.adapters.memory.webhooks import MemoryWebhookLog
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.records import TaskOutcome
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.domain.workers import WorkerBeat
from scrapejobs_shared.ports.batch_store import BatchClaim, Claimed
from scrapejobs_shared.ports.webhooks import WebhookDelivery
from support.memory_dispatcher import memory_client, memory_dispatcher

HTMX = {"HX-Request": "true"}


async def _submit(client: httpx.AsyncClient, urls: list[str]) -> str:
    response = await client.post("/v1/jobs", json={"urls": urls})
    assert response.status_code == 202
    job_id: str = response.json()["id"]
    return job_id


async def _finish(store: MemoryJobStore, job_id: str, outcomes: list[TaskStatus]) -> list[str]:
    """Settle the job's tasks with ``outcomes`` (in task order); returns their ids."""
    now = datetime.now(UTC)
    [batch] = (await store.open_batches(job_id, 10, None)).items
    claim = await store.claim_batch(BatchClaim(job_id, batch.id, now, now + timedelta(seconds=30)))
    assert isinstance(claim, Claimed)
    ids = [item.task_id for item in batch.items]
    changes = [
        FinishTask(task_id, TaskOutcome(status, error="HTTP 500"), service_ms=10)
        for task_id, status in zip(ids, outcomes, strict=True)
    ]
    await store.settle(claim.handle, changes, now, None)
    return ids


async def test_every_page_renders_as_html() -> None:
    store = MemoryJobStore()
    async with memory_client(store) as client:
        job_id = await _submit(client, ["https://shop.test/1", "https://shop.test/2"])
        for path in [
            "/ui",
            "/ui/fragments/overview",
            "/ui/fragments/history",
            f"/ui/jobs/{job_id}",
            f"/ui/fragments/jobs/{job_id}",
            "/ui/dead-letters",
            f"/ui/dead-letters?job_id={job_id}",
            "/ui/fragments/dead-letters",
            "/ui/hosts",
            "/ui/fragments/hosts",
        ]:
            response = await client.get(path)
            assert response.status_code == 200, path
            assert response.headers["content-type"].startswith("text/html"), path
        home = (await client.get("/ui")).text
        assert '<html lang="en">' in home and "<main" in home and "Health: " in home
        assert f'aria-label="Progress of job {job_id}"' in home
        assert (await client.get("/ui/static/htmx.min.js")).status_code == 200
        assert (await client.get("/ui/static/%2e%2e/routes.py")).status_code == 404


async def test_an_unknown_job_or_a_bad_page_link_is_an_html_page() -> None:
    async with memory_client(MemoryJobStore()) as client:
        job_id = await _submit(client, ["https://shop.test/1"])
        for path in ["/ui/jobs/0123456789abcdef", "/ui/jobs/a:b", "/ui/fragments/jobs/nope"]:
            missing = await client.get(path)
            assert missing.status_code == 404 and "Job not found" in missing.text, path
            assert missing.headers["content-type"].startswith("text/html")
        fragment = await client.get("/ui/fragments/jobs/nope", headers=HTMX)
        assert fragment.status_code == 404 and "<html" not in fragment.text
        bad = await client.get(f"/ui/jobs/{job_id}", params={"page_token": "garbage"})
        assert bad.status_code == 400 and "Bad page link" in bad.text


async def test_replaying_one_dead_letter_replays_that_task_only() -> None:
    store, publisher = MemoryJobStore(), MemoryTaskPublisher()
    async with memory_client(store, publisher=publisher) as client:
        job_id = await _submit(client, ["https://shop.test/1", "https://shop.test/2"])
        first, second = await _finish(
            store, job_id, [TaskStatus.DEAD_LETTERED, TaskStatus.DEAD_LETTERED]
        )
        page = (await client.get(f"/ui/jobs/{job_id}")).text
        assert page.count("HTTP 500") >= 2  # the errors section lists both

        refused = await client.post(f"/ui/dead-letters/{job_id}/{first}/replay")
        assert refused.status_code == 400
        assert (await store.get_task(job_id, first)).status is TaskStatus.DEAD_LETTERED

        replayed = await client.post(f"/ui/dead-letters/{job_id}/{first}/replay", headers=HTMX)
        assert replayed.status_code == 200 and "Replayed 1 task." in replayed.text
        assert (await store.get_task(job_id, first)).status is TaskStatus.QUEUED
        assert (await store.get_task(job_id, second)).status is TaskStatus.DEAD_LETTERED
        assert f'data-task-id="{second}"' in replayed.text
        assert f'data-task-id="{first}"' not in replayed.text

        again = await client.post(f"/ui/dead-letters/{job_id}/{first}/replay", headers=HTMX)
        assert "Nothing to replay" in again.text
        unknown = await client.post("/ui/dead-letters/nope/t/replay", headers=HTMX)
        assert unknown.status_code == 404


async def test_replay_all_replays_every_dead_letter_of_the_filter() -> None:
    store = MemoryJobStore()
    async with memory_client(store) as client:
        job_id = await _submit(client, ["https://shop.test/1", "https://shop.test/2"])
        await _finish(store, job_id, [TaskStatus.DEAD_LETTERED, TaskStatus.SUCCEEDED])
        listed = (await client.get("/ui/dead-letters")).text
        assert 'hx-confirm="Replay every dead letter (up to 500)?"' in listed

        response = await client.post(
            "/ui/dead-letters/replay", params={"job_id": job_id}, headers=HTMX
        )

        assert "Replayed 1 task." in response.text
        assert "No dead letters for this job" in response.text
        letters = (await client.get("/v1/dead-letters", params={"job_id": job_id})).json()
        assert letters["dead_letters"] == []


async def test_a_job_page_shows_its_webhook_deliveries() -> None:
    store, deliveries = MemoryJobStore(), MemoryWebhookLog()
    async with memory_client(store, webhook_log=deliveries) as client:
        job_id = await _submit(client, ["https://shop.test/1"])
        empty = await client.get(f"/ui/jobs/{job_id}")
        now = datetime.now(UTC)
        delivery = WebhookDelivery(
            "evt_1", "job.completed", "https://hooks.test/", "pending", 2, now, now, 500, "HTTP 500"
        )
        await deliveries.put(job_id, delivery, now)
        page = await client.get(f"/ui/jobs/{job_id}")
    assert "No webhook events" in empty.text
    assert "job.completed" in page.text and "HTTP 500" in page.text


async def test_the_dashboard_is_behind_the_api_s_authentication() -> None:
    settings = DispatcherSettings(auth_mode="api_key", api_key_hashes=hash_api_key("sj_secret"))
    store = MemoryJobStore()
    app = memory_dispatcher(store, settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            for path in ["/ui", "/ui/hosts", "/ui/fragments/overview"]:  # to the sign-in form
                assert (await client.get(path)).status_code == 303, path
                assert (await client.get(path, headers=HTMX)).status_code == 401, path
            assert (await client.get("/ui/static/dashboard.css")).status_code == 200  # no data
            assert (await client.post("/ui/dead-letters/replay", headers=HTMX)).status_code == 401
            key = {"X-API-Key": "sj_secret"}
            assert (await client.get("/ui", headers=key)).status_code == 200


async def test_a_rendered_job_page_says_how_it_renders_and_how_long_each_page_took() -> None:
    store = MemoryJobStore()
    async with memory_client(store) as client:
        response = await client.post(
            "/v1/jobs",
            json={
                "urls": ["https://shop.test/app"],
                "options": {"render": {"wait_for": "h1.title", "wait_ms": 500}},
            },
        )
        assert response.status_code == 202 and response.json()["rendered"] is True
        job_id = response.json()["id"]
        now = datetime.now(UTC)
        [batch] = (await store.open_batches(job_id, 10, None)).items
        assert batch.lane == "render"
        claim = await store.claim_batch(
            BatchClaim(job_id, batch.id, now, now + timedelta(seconds=30))
        )
        assert isinstance(claim, Claimed)
        outcome = TaskOutcome(
            TaskStatus.SUCCEEDED, http_status=200, elapsed_ms=900, rendered_ms=700
        )
        await store.settle(claim.handle, [FinishTask(batch.items[0].task_id, outcome)], now, None)
        page = (await client.get(f"/ui/jobs/{job_id}")).text
        assert "headless Chromium, wait for h1.title, +500 ms" in page
        assert "900 ms (rendered in 700 ms)" in page
        plain = await _submit(client, ["https://shop.test/plain"])
        assert 'data-testid="job-rendering"' not in (await client.get(f"/ui/jobs/{plain}")).text


async def test_polls_are_answered_from_the_figures_kept_and_refreshed_behind_them() -> None:
    """dashboard_cache_s: a poll within it reads nothing; after it, the poll still answers at
    once from what was kept while the figures are computed again; a replay shows at once."""
    store = MemoryJobStore()
    settings = DispatcherSettings(auth_mode="none", dashboard_cache_s=0.3)
    async with memory_client(store, settings) as client:
        first = await client.get("/ui/fragments/workers")
        assert "No worker heard from" in first.text
        now = datetime.now(UTC)
        await store.report(WorkerBeat("w-1", "rev", now, now, 1, 4))
        kept = await client.get("/ui/fragments/workers", headers=HTMX)
        assert "No worker heard from" in kept.text  # within 0.3 s: as kept
        await asyncio.sleep(0.35)
        stale = await client.get("/ui/fragments/workers", headers=HTMX)  # at once; refreshed
        assert "No worker heard from" in stale.text
        await asyncio.sleep(0.05)
        fresh = await client.get("/ui/fragments/workers", headers=HTMX)
        assert 'data-worker-id="w-1"' in fresh.text

        job_id = await _submit(client, ["https://shop.test/1"])
        await _finish(store, job_id, [TaskStatus.DEAD_LETTERED])
        await client.get("/ui/dead-letters")
        replayed = await client.post("/ui/dead-letters/replay", headers=HTMX)
        assert "Replayed 1 task." in replayed.text
        assert "No dead letters" in (await client.get("/ui/dead-letters")).text


async def test_a_job_page_shows_each_page_s_screenshot_served_to_its_viewer() -> None:
    store, files = MemoryJobStore(), MemoryFileStore()
    settings = DispatcherSettings(auth_mode="none", files_bucket="b")
    async with memory_client(store, settings, file_store=files) as client:
        body = {"urls": ["https://shop.test/1"], "options": {"formats": ["screenshot"]}}
        job_id = (await client.post("/v1/jobs", json=body)).json()["id"]
        now = datetime.now(UTC)
        [batch] = (await store.open_batches(job_id, 10, None)).items
        task_id = batch.items[0].task_id
        url = f"http://api.test/v1/jobs/{job_id}/files/{task_id}/screenshot.png"
        claim = await store.claim_batch(
            BatchClaim(job_id, batch.id, now, now + timedelta(seconds=30))
        )
        assert isinstance(claim, Claimed)
        done = TaskOutcome(TaskStatus.SUCCEEDED, 200, {"screenshot": url}, elapsed_ms=5)
        await store.settle(claim.handle, [FinishTask(task_id, done)], now, None)
        await files.put(
            f"default/{job_id}/{task_id}/screenshot.png", b"\x89PNG", "image/png", batch.expire_at
        )
        page = (await client.get(f"/ui/jobs/{job_id}")).text
        path = f"/ui/jobs/{job_id}/files/{task_id}/screenshot.png"
        assert f'src="{path}"' in page
        image = await client.get(path)
        assert image.status_code == 200 and image.content == b"\x89PNG"
        missing = await client.get(path.replace("screenshot.png", "screenshot.jpeg"))
        assert missing.status_code == 404 and "text/html" in missing.headers["content-type"]
