"""A tenant's pages_per_day holds as work is accepted: a submission's pages (its URLs, its
crawl's page limit) are reserved when it is accepted, so five 1,000-URL jobs are not all
accepted under a quota of 10; parallel submissions on several instances never pass it; what a
cancelled job will not fetch comes back, and so do an ended job's pages that cost nothing (reused
from the page cache); retry and replay go through the same rule, as does the unverified-TLS
switch."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_dispatcher.tenants.api_keys import generate_api_key
from scrapejobs_shared.adapters.memory.api_keys import MemoryApiKeyStore
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.quota_ledger import MemoryQuotaLedger
from scrapejobs_shared.adapters.memory.tenant_quotas import MemoryTenantQuotas
from scrapejobs_shared.delivery.completion import complete_if_done
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.records import TaskOutcome
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.ports.batch_store import BatchClaim, Claimed
from scrapejobs_shared.ports.tenant_quotas import Quota
from support.memory_dispatcher import memory_dispatcher

ADMIN_KEY, ADMIN_DIGEST = generate_api_key()


def urls(count: int, at: str = "a") -> dict[str, Any]:
    return {"urls": [f"http://127.0.0.1:9/{at}/{n}" for n in range(count)]}


@asynccontextmanager
async def instances(
    count: int, store: MemoryJobStore, quota: int, **settings: Any
) -> AsyncIterator[tuple[list[httpx.AsyncClient], dict[str, str], MemoryQuotaLedger]]:
    """``count`` dispatcher instances over one store, one key store, one ledger; a member key
    of team-a, whose quota is ``quota`` pages a day."""
    config = DispatcherSettings(
        auth_mode="api_key",
        api_key_hashes=ADMIN_DIGEST,
        **({"coalesce_window_ms": 0} | settings),
    )
    quotas, ledger = MemoryTenantQuotas(), MemoryQuotaLedger()
    await quotas.set_quota("team-a", Quota(pages_per_day=quota))
    shared = {"api_keys": MemoryApiKeyStore(), "tenant_quotas": quotas, "quota_ledger": ledger}
    async with AsyncExitStack() as stack:
        clients = []
        for _ in range(count):
            app = memory_dispatcher(store, config, **shared)
            await stack.enter_async_context(app.router.lifespan_context(app))
            transport = httpx.ASGITransport(app=app)
            client = httpx.AsyncClient(transport=transport, base_url="http://t")
            clients.append(await stack.enter_async_context(client))
        made = await clients[0].post(
            "/v1/keys", json={"tenant": "team-a"}, headers={"X-API-Key": ADMIN_KEY}
        )
        yield clients, {"X-API-Key": made.json()["key"]}, ledger


async def end_every_page(
    store: MemoryJobStore, job_id: str, status: TaskStatus = TaskStatus.FAILED, reused: int = 0
) -> None:
    """Every page of the job ends ``status`` with a response from its site (a charge), except
    the first ``reused`` pages, which succeed from the page cache (no fetch, no charge)."""
    now = datetime.now(UTC)
    served = TaskOutcome(status, http_status=500, error="http_500", elapsed_ms=20)
    cached = TaskOutcome(TaskStatus.SUCCEEDED, http_status=200)
    left = reused
    for batch_id, batch in store.batches[job_id].items():
        claim = await store.claim_batch(
            BatchClaim(job_id, batch_id, now, now + timedelta(seconds=30))
        )
        assert isinstance(claim, Claimed)
        changes = []
        for item in batch.items:
            changes.append(FinishTask(item.task_id, cached if left > 0 else served))
            left -= 1
        await store.settle(claim.handle, changes, now)


async def test_large_jobs_count_their_pages_when_accepted() -> None:
    async with instances(1, MemoryJobStore(), quota=10) as ([api], alice, _):
        answers = [await api.post("/v1/jobs", json=urls(1000), headers=alice) for _ in range(5)]
        assert [a.status_code for a in answers] == [429] * 5
        refused = answers[0]
        assert refused.json()["error"]["field"] == "pages_per_day"
        assert 0 < int(refused.headers["Retry-After"]) <= 86_401
        assert (await api.post("/v1/jobs", json=urls(10), headers=alice)).status_code == 202
        crawl = {"crawl": {"start_url": "http://127.0.0.1:9/", "max_pages": 5}}
        assert (await api.post("/v1/jobs", json=crawl, headers=alice)).status_code == 429
        v2 = await api.post("/v2/scrape", json={"url": "http://127.0.0.1:9/x"}, headers=alice)
        assert v2.status_code == 429


async def test_parallel_submissions_on_three_instances_never_pass_the_quota() -> None:
    store = MemoryJobStore()
    async with instances(3, store, quota=50) as (apis, alice, ledger):
        calls = [
            apis[n % 3].post("/v1/jobs", json=urls(7, f"j{n}"), headers=alice) for n in range(30)
        ]
        answers = await asyncio.gather(*calls)
        accepted = [a for a in answers if a.status_code == 202]
        assert {a.status_code for a in answers} == {202, 429}
        assert sum(a.json()["total"] for a in accepted) <= 50
        assert len(accepted) == 7  # 49 pages: an eighth would pass 50
        today = datetime.now(UTC).date()
        assert await ledger.reserved("team-a", today) == 49
        assert ledger.writes < 30  # a burst at one instance goes in a few writes


async def test_a_cancelled_job_gives_back_what_it_will_not_fetch() -> None:
    async with instances(1, MemoryJobStore(), quota=10) as ([api], alice, _):
        first = (await api.post("/v1/jobs", json=urls(8), headers=alice)).json()
        assert (await api.post("/v1/jobs", json=urls(5, "b"), headers=alice)).status_code == 429
        cancelled = await api.post(f"/v1/jobs/{first['id']}:cancel", headers=alice)
        assert cancelled.status_code == 200
        assert (await api.post("/v1/jobs", json=urls(5, "b"), headers=alice)).status_code == 202
        again = await api.post(f"/v1/jobs/{first['id']}:cancel", headers=alice)
        assert again.status_code in (200, 409)  # given back once only
        assert (await api.post("/v1/jobs", json=urls(6, "c"), headers=alice)).status_code == 429


async def test_the_quota_holds_through_cancel_delete_and_a_reused_id() -> None:
    """The review's bypass: a 1-URL job under a chosen id (an Idempotency-Key's), cancelled
    and deleted, then 5,000 URLs under the same id were granted as that reservation. (A small
    job is coalesced: its key is kept by its job alone, which the delete removes.)"""
    async with instances(1, MemoryJobStore(), 10, coalesce_window_ms=5) as ([api], alice, _):
        keyed = alice | {"Idempotency-Key": "chosen"}
        first = (await api.post("/v1/jobs", json=urls(1), headers=keyed)).json()
        assert (await api.post(f"/v1/jobs/{first['id']}:cancel", headers=alice)).status_code == 200
        assert (await api.delete(f"/v1/jobs/{first['id']}", headers=alice)).status_code == 204
        many = await api.post("/v1/jobs", json=urls(5000, "b"), headers=keyed)
        assert many.status_code == 429, many.text
        again = await api.post("/v1/jobs", json=urls(5000, "b"), headers=alice)
        assert again.status_code == 429
        assert (await api.post("/v1/jobs", json=urls(10, "c"), headers=alice)).status_code == 202


async def test_retry_and_replay_past_the_quota_are_refused() -> None:
    store = MemoryJobStore()
    async with instances(1, store, quota=10) as ([api], alice, _):
        job = (await api.post("/v1/jobs", json=urls(6), headers=alice)).json()["id"]
        await end_every_page(store, job)
        retried = await api.post(f"/v1/jobs/{job}:retry?status=failed", headers=alice)
        assert retried.status_code == 429, retried.text  # 6 + 6 would pass 10
        assert retried.json()["error"]["field"] == "pages_per_day"
        lost = (await api.post("/v1/jobs", json=urls(4, "d"), headers=alice)).json()["id"]
        await end_every_page(store, lost, TaskStatus.DEAD_LETTERED)  # 10 reserved in all
        replay = await api.post("/v1/dead-letters:replay", json={"job_id": lost}, headers=alice)
        assert replay.status_code == 429, replay.text
        results = (await api.get(f"/v1/jobs/{job}/results", headers=alice)).json()["results"]
        assert {t["status"] for t in results} == {"failed"}  # nothing ran again


async def test_a_retry_within_the_quota_runs_and_counts() -> None:
    store = MemoryJobStore()
    async with instances(1, store, quota=12) as ([api], alice, ledger):
        job = (await api.post("/v1/jobs", json=urls(6), headers=alice)).json()["id"]
        await end_every_page(store, job)
        retried = await api.post(f"/v1/jobs/{job}:retry?status=failed", headers=alice)
        assert retried.status_code == 200 and retried.json()["replayed"] == 6
        assert await ledger.reserved("team-a", datetime.now(UTC).date()) == 12
        # nothing left to retry: nothing reserved
        again = await api.post(f"/v1/jobs/{job}:retry?status=failed", headers=alice)
        assert again.json()["replayed"] == 0
        assert await ledger.reserved("team-a", datetime.now(UTC).date()) == 12


async def test_a_retry_after_the_unverified_tls_switch_was_turned_off_is_refused() -> None:
    store = MemoryJobStore()
    insecure = urls(2) | {"options": {"verify_tls": False}}
    async with instances(1, store, quota=100) as ([api], alice, _):
        job = (await api.post("/v1/jobs", json=insecure, headers=alice)).json()["id"]
        await end_every_page(store, job)
    async with instances(1, store, quota=100, allow_unverified_tls=False) as ([api], alice, _):
        retried = await api.post(f"/v1/jobs/{job}:retry?status=failed", headers=alice)
        assert retried.status_code == 422, retried.text
        assert retried.json()["error"]["field"] == "options.verify_tls"


async def test_an_ended_crawl_gives_back_the_pages_it_did_not_find() -> None:
    """A crawl reserves its max_pages; once it ended having found fewer, a submission that
    would pass the quota first settles the tenant's day and is accepted with what came back."""
    store = MemoryJobStore()
    crawl = {"crawl": {"start_url": "http://127.0.0.1:9/", "max_pages": 8}}
    async with instances(1, store, quota=10) as ([api], alice, ledger):
        made = (await api.post("/v1/jobs", json=crawl, headers=alice)).json()
        assert (await api.post("/v1/jobs", json=urls(5), headers=alice)).status_code == 429
        await end_every_page(store, made["id"], TaskStatus.SUCCEEDED)  # found only its start
        assert await complete_if_done(store, made["id"], lambda: datetime.now(UTC))
        assert (await api.post("/v1/jobs", json=urls(5), headers=alice)).status_code == 202
        today = datetime.now(UTC).date()
        assert await ledger.reserved("team-a", today) == 1 + 5
        assert await ledger.unsettled("team-a", today, 10) != []  # the new job's, still open


async def test_an_ended_job_gives_back_its_pages_reused_from_the_cache() -> None:
    """Pages reused from the page cache are not fetched, so they do not count against the
    day, as /v1/usage does not count them: once the job ended, a submission that would pass
    the quota settles the day and gets them back; fetched pages (a 500 is a response) stay
    counted."""
    store = MemoryJobStore()
    async with instances(1, store, quota=10) as ([api], alice, ledger):
        job = (await api.post("/v1/jobs", json=urls(8), headers=alice)).json()["id"]
        assert (await api.post("/v1/jobs", json=urls(5, "b"), headers=alice)).status_code == 429
        await end_every_page(store, job, reused=6)  # 2 fetched
        assert await complete_if_done(store, job, lambda: datetime.now(UTC))
        assert (await api.post("/v1/jobs", json=urls(5, "b"), headers=alice)).status_code == 202
        today = datetime.now(UTC).date()
        assert await ledger.reserved("team-a", today) == 2 + 5
        assert (await api.post("/v1/jobs", json=urls(4, "c"), headers=alice)).status_code == 429
