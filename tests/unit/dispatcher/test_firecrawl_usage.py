"""Firecrawl's team endpoints over the in-memory adapters: credits are pages fetched (not pages
reused, never fetched, or unusable), tokens what the ai stages used, remaining the plan less the
month's use; the history by billing period; the queue and concurrency from the open jobs'
counters. (firecrawl-py's own calls read them in tests/e2e.)"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_dispatcher.tenants.usage import period_of
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.metered import Metered
from scrapejobs_shared.domain.model_usage import ModelUsage
from scrapejobs_shared.domain.records import TaskOutcome
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.ports.batch_store import BatchClaim, Claimed
from support.memory_dispatcher import memory_client
from support.worker_store import as_a_worker

SETTINGS = DispatcherSettings(
    auth_mode="none", dashboard_cache_s=0, plan_credits=1000, plan_tokens=5000, max_concurrency=7
)
URLS = [f"https://a.example/{n}" for n in range(6)]


def outcomes() -> list[TaskOutcome]:
    """Six pages: three fetched and succeeded (one with model tokens), a 404 fetched, a
    challenge page fetched (unusable: not charged), one never reached (no response)."""
    ok = TaskOutcome(TaskStatus.SUCCEEDED, http_status=200, elapsed_ms=40)
    return [
        ok,
        ok,
        ok,
        TaskOutcome(TaskStatus.FAILED, http_status=404, error="http 404", elapsed_ms=30),
        TaskOutcome(
            TaskStatus.FAILED, http_status=403, error="challenge: Cloudflare", elapsed_ms=20
        ),
        TaskOutcome(TaskStatus.FAILED, error="blocked_destination: 10.0.0.1"),
    ]


async def run_job(store: MemoryJobStore, client) -> None:
    answer = await client.post("/v1/jobs", json={"urls": URLS})
    job_id = answer.json()["id"]
    now = datetime.now(UTC)
    for batch_id, batch in store.batches[job_id].items():
        claim = await store.claim_batch(
            BatchClaim(job_id, batch_id, now, now + timedelta(seconds=30))
        )
        assert isinstance(claim, Claimed)
        done = outcomes()
        changes = [
            FinishTask(
                item.task_id,
                done[URLS.index(item.url)],
                usage=ModelUsage(1, 0, 100, 20) if item.url == URLS[0] else None,
            )
            for item in batch.items
        ]
        await as_a_worker(store).settle(claim.handle, changes, now, None)


async def test_credit_and_token_usage_count_what_the_month_used_against_the_plan() -> None:
    store = MemoryJobStore()
    async with memory_client(store, SETTINGS) as client:
        await run_job(store, client)
        credits = (await client.get("/v2/team/credit-usage")).json()
        tokens = (await client.get("/v2/team/token-usage")).json()
        credit_history = (await client.get("/v2/team/credit-usage/historical")).json()
        token_history = (
            await client.get("/v2/team/token-usage/historical", params={"byApiKey": "true"})
        ).json()

    start, end = period_of(datetime.now(UTC))
    assert credits["success"] is True
    assert credits["data"] == {
        "remainingCredits": 996,
        "planCredits": 1000,
        "creditsUsed": 4,  # three successes and the 404; not the challenge, not the refusal
        "billingPeriodStart": start.isoformat().replace("+00:00", "Z"),
        "billingPeriodEnd": end.isoformat().replace("+00:00", "Z"),
    }
    assert tokens["data"]["tokensUsed"] == 120 and tokens["data"]["remainingTokens"] == 4880
    assert len(credit_history["periods"]) == 12
    current = credit_history["periods"][0]
    assert current["creditsUsed"] == 4 and current["apiKey"] is None
    assert all(p["creditsUsed"] == 0 for p in credit_history["periods"][1:])
    assert token_history["periods"][0]["tokensUsed"] == 120
    starts = [p["startDate"] for p in credit_history["periods"]]
    assert starts == sorted(starts, reverse=True) and len(set(starts)) == 12


async def test_queue_status_and_concurrency_read_the_open_work() -> None:
    store = MemoryJobStore()
    async with memory_client(store, SETTINGS) as client:
        empty = (await client.get("/v2/team/queue-status")).json()
        assert empty == {
            "success": True,
            "jobsInQueue": 0,
            "activeJobsInQueue": 0,
            "waitingJobsInQueue": 0,
            "maxConcurrency": 7,
            "mostRecentSuccess": None,
        }
        waiting = (await client.post("/v1/jobs", json={"urls": URLS})).json()["id"]
        queued = (await client.get("/v2/team/queue-status")).json()
        assert queued["waitingJobsInQueue"] == 6 and queued["jobsInQueue"] == 6
        now = datetime.now(UTC)
        [(batch_id, _)] = store.batches[waiting].items()
        await store.claim_batch(BatchClaim(waiting, batch_id, now, now + timedelta(seconds=30)))
        running = (await client.get("/v2/team/queue-status")).json()
        assert running["activeJobsInQueue"] == 6 and running["waitingJobsInQueue"] == 0
        check = (await client.get("/v2/concurrency-check")).json()
        assert check == {"success": True, "concurrency": 6, "maxConcurrency": 7}

        await run_job(store, client)
        after = (await client.get("/v2/team/queue-status")).json()
    last = datetime.fromisoformat(after["mostRecentSuccess"])
    assert timedelta(0) <= last - now <= timedelta(minutes=5)


def test_a_billing_period_is_a_calendar_month() -> None:
    assert period_of(datetime(2026, 12, 31, 23, 59, tzinfo=UTC)) == (
        datetime(2026, 12, 1, tzinfo=UTC),
        datetime(2027, 1, 1, tzinfo=UTC),
    )
    assert period_of(datetime(2026, 2, 1, tzinfo=UTC))[1] == datetime(2026, 3, 1, tzinfo=UTC)


async def test_a_pdf_costs_a_credit_a_page_read_beside_its_own_as_firecrawl_counts() -> None:
    store = MemoryJobStore()
    async with memory_client(store, SETTINGS) as client:
        answer = await client.post("/v2/batch/scrape", json={"urls": URLS[:2]})
        job_id = answer.json()["id"]
        now = datetime.now(UTC)
        pdf = TaskOutcome(
            TaskStatus.SUCCEEDED, http_status=200, elapsed_ms=40, metered=Metered(document_pages=4)
        )
        html = TaskOutcome(TaskStatus.SUCCEEDED, http_status=200, elapsed_ms=40)
        for batch_id, batch in store.batches[job_id].items():
            claim = await store.claim_batch(
                BatchClaim(job_id, batch_id, now, now + timedelta(seconds=30))
            )
            assert isinstance(claim, Claimed)
            changes = [
                FinishTask(item.task_id, pdf if item.url == URLS[0] else html)
                for item in batch.items
            ]
            await as_a_worker(store).settle(claim.handle, changes, now, None)
        credits = (await client.get("/v2/team/credit-usage")).json()["data"]
        status = (await client.get(f"/v2/batch/scrape/{job_id}")).json()
    assert credits["creditsUsed"] == 6  # two pages, and the PDF's four pages read
    assert status["creditsUsed"] == 6
    [job] = store.jobs.values()
    assert store.tallies[job.id].uncharged == 0  # its daily quota: two pages, both charged
