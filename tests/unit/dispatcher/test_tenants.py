"""Tenants over in-memory adapters, in api_key mode: keys made at run time with their roles,
each tenant's work seen and touched only by its members, admins seeing all (and filtering),
a scheduler key that triggers schedules and runs maintenance and nothing else, a revoked key
refused by every instance within the recheck time, the dashboard per tenant."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_dispatcher.tenants.api_keys import generate_api_key
from scrapejobs_shared.adapters.memory.api_keys import MemoryApiKeyStore
from scrapejobs_shared.adapters.memory.host_gate import MemoryHostGate
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.quota_ledger import MemoryQuotaLedger
from scrapejobs_shared.adapters.memory.tenant_quotas import MemoryTenantQuotas
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.records import TaskOutcome
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.ports.batch_store import BatchClaim, Claimed
from support.memory_dispatcher import memory_dispatcher
from support.worker_store import as_a_worker

ADMIN_KEY, ADMIN_DIGEST = generate_api_key()
RECHECK_S = 0.3
JOB = {"urls": ["http://127.0.0.1:9/a", "http://127.0.0.1:9/b"]}
SCHEDULED = {
    "X-CloudScheduler-JobName": "nightly",
    "X-CloudScheduler-ScheduleTime": "2026-11-26T00:00:00Z",
}


@asynccontextmanager
async def dispatchers(
    count: int = 1, store: MemoryJobStore | None = None, gate: MemoryHostGate | None = None
) -> AsyncIterator[list[httpx.AsyncClient]]:
    """``count`` dispatcher processes over one store and one key store."""
    settings = DispatcherSettings(
        auth_mode="api_key",
        api_key_hashes=ADMIN_DIGEST,
        api_key_recheck_s=RECHECK_S,
        quota_recheck_s=RECHECK_S,
        coalesce_window_ms=0,  # the test plays the worker on the batches it finds
    )
    store, keys = store or MemoryJobStore(), MemoryApiKeyStore()
    shared = {  # what every instance reads from the one store
        "api_keys": keys,
        "gate": gate or MemoryHostGate(),
        "tenant_quotas": MemoryTenantQuotas(),
        "quota_ledger": MemoryQuotaLedger(),
    }
    async with AsyncExitStack() as stack:
        clients = []
        for _ in range(count):
            app = memory_dispatcher(store, settings, **shared)
            await stack.enter_async_context(app.router.lifespan_context(app))
            transport = httpx.ASGITransport(app=app)
            client = httpx.AsyncClient(transport=transport, base_url="http://t")
            clients.append(await stack.enter_async_context(client))
        yield clients


def as_key(key: str) -> dict[str, str]:
    return {"X-API-Key": key}


async def new_key(client: httpx.AsyncClient, tenant: str, role: str = "member") -> str:
    made = await client.post(
        "/v1/keys",
        json={"tenant": tenant, "role": role, "name": f"{tenant} {role}"},
        headers=as_key(ADMIN_KEY),
    )
    assert made.status_code == 201, made.text
    body = made.json()
    assert body["key"].startswith("sj_") and body["id"].startswith("key_")
    assert (body["tenant"], body["role"]) == (tenant, role)
    return str(body["key"])


async def test_another_tenants_job_is_not_found_by_any_call() -> None:
    async with dispatchers() as [api]:
        alice, bob = await new_key(api, "team-a"), await new_key(api, "team-b")
        made = await api.post("/v1/jobs", json=JOB, headers=as_key(alice))
        assert made.status_code == 202 and made.json()["tenant"] == "team-a"
        job = made.json()["id"]
        calls = [
            ("GET", f"/v1/jobs/{job}"),
            ("GET", f"/v1/jobs/{job}/results"),
            ("GET", f"/v1/jobs/{job}/results:export"),
            ("GET", f"/v1/jobs/{job}/webhooks"),
            ("POST", f"/v1/jobs/{job}:cancel"),
            ("POST", f"/v1/jobs/{job}:retry"),
            ("DELETE", f"/v1/jobs/{job}"),
            ("GET", f"/v1/dead-letters?job_id={job}"),
        ]
        missing = await api.get("/v1/jobs/no-such-job", headers=as_key(bob))
        for method, path in calls:
            answer = await api.request(method, path, headers=as_key(bob))
            assert answer.status_code == 404, (method, path, answer.text)
            # word for word what a job that does not exist gets (but for its id)
            assert answer.json()["error"]["code"] == missing.json()["error"]["code"]
        assert (await api.get(f"/v1/jobs/{job}", headers=as_key(alice))).json()["status"] in (
            JobStatus.QUEUED.value,
            JobStatus.RUNNING.value,
        )
        cancelled = await api.post(f"/v1/jobs/{job}:cancel", headers=as_key(alice))
        assert cancelled.status_code == 200


async def test_lists_are_the_tenants_own_and_an_admin_sees_all_and_filters() -> None:
    async with dispatchers() as [api]:
        alice, bob = await new_key(api, "team-a"), await new_key(api, "team-b")
        a_jobs = [(await api.post("/v1/jobs", json=JOB, headers=as_key(alice))).json()["id"]]
        b_jobs = [(await api.post("/v1/jobs", json=JOB, headers=as_key(bob))).json()["id"]]

        async def listed(key: str, **params: str) -> set[str]:
            page = await api.get("/v1/jobs", params=params, headers=as_key(key))
            assert page.status_code == 200, page.text
            return {job["id"] for job in page.json()["jobs"]}

        assert await listed(alice) == set(a_jobs)
        assert await listed(bob) == set(b_jobs)
        assert await listed(bob, tenant="team-a") == set(b_jobs)  # a member's filter is moot
        assert await listed(ADMIN_KEY) == set(a_jobs + b_jobs)
        assert await listed(ADMIN_KEY, tenant="team-a") == set(a_jobs)
        # an admin submits for a tenant; a member only for its own
        for_b = await api.post("/v1/jobs?tenant=team-b", json=JOB, headers=as_key(ADMIN_KEY))
        assert for_b.json()["tenant"] == "team-b"
        assert for_b.json()["id"] in await listed(bob)
        refused = await api.post("/v1/jobs?tenant=team-b", json=JOB, headers=as_key(alice))
        assert refused.status_code == 403


async def test_a_scheduler_key_triggers_schedules_and_maintenance_and_nothing_else() -> None:
    async with dispatchers() as [api]:
        scheduler = await new_key(api, "team-a", "scheduler")
        headers = as_key(scheduler)
        plain = await api.post("/v1/jobs", json=JOB, headers=headers)
        assert plain.status_code == 403 and "scheduler" in plain.json()["error"]["message"]
        scheduled = await api.post("/v1/jobs", json=JOB, headers=headers | SCHEDULED)
        assert scheduled.status_code == 202 and scheduled.json()["tenant"] == "team-a"
        again = await api.post("/v1/jobs", json=JOB, headers=headers | SCHEDULED)
        assert again.status_code == 200 and again.json()["id"] == scheduled.json()["id"]
        for path in ("/v1/maintenance/reconcile", "/v1/maintenance/republish"):
            assert (await api.post(path, headers=headers)).status_code == 200, path
        for method, path in [
            ("GET", "/v1/jobs"),
            ("GET", f"/v1/jobs/{scheduled.json()['id']}"),
            ("POST", "/v1/scrape"),
            ("GET", "/v1/dead-letters"),
            ("GET", "/v1/keys"),
            ("GET", "/v1/workers"),
            ("POST", "/v2/batch/scrape"),
        ]:
            answer = await api.request(method, path, headers=headers, json={})
            assert answer.status_code == 403, (method, path, answer.status_code)


async def test_no_member_can_take_a_scheduled_runs_job() -> None:
    """A member sending a schedule's Cloud Scheduler headers (its own tenant's, or another's)
    is refused: the run's id (and the quota reservation under it) is the schedule's alone.
    Team-a's run, when it comes, creates team-a's job; an admin sending the same headers for
    team-b gets a job id of team-b's."""
    async with dispatchers() as [api]:
        for tenant in ("team-a", "team-b"):
            member = await new_key(api, tenant)
            taken = await api.post("/v1/jobs", json=JOB, headers=as_key(member) | SCHEDULED)
            assert taken.status_code == 403, tenant
            assert "only from a scheduler key" in taken.json()["error"]["message"]
        scheduler = await new_key(api, "team-a", "scheduler")
        run = await api.post("/v1/jobs", json=JOB, headers=as_key(scheduler) | SCHEDULED)
        assert run.status_code == 202 and run.json()["tenant"] == "team-a"
        admin = as_key(ADMIN_KEY) | SCHEDULED
        other = await api.post("/v1/jobs?tenant=team-b", json=JOB, headers=admin)
        assert other.status_code == 202 and other.json()["tenant"] == "team-b"
        assert other.json()["id"] != run.json()["id"]


async def test_members_see_no_hosts_and_no_workers_but_admins_do() -> None:
    """Paused hosts are every tenant's sites: named to admins only (stats, health, the
    dashboard); a host's state and the workers are an admin's views."""
    gate = MemoryHostGate()
    until = datetime.now(UTC) + timedelta(minutes=5)
    gate.open_until["https~secret-of-team-b.example~443"] = until
    async with dispatchers(gate=gate) as [api]:
        alice = as_key(await new_key(api, "team-a"))
        admin = as_key(ADMIN_KEY)
        stats = (await api.get("/v1/stats", headers=alice)).json()
        assert stats["paused_hosts"] == []
        assert (await api.get("/v1/stats", headers=admin)).json()["paused_hosts"]
        health = (await api.get("/v1/health", headers=alice)).text
        assert "secret-of-team-b" not in health and "1 host(s)" in health
        assert "secret-of-team-b" in (await api.get("/v1/health", headers=admin)).text
        url = {"url": "https://secret-of-team-b.example/"}
        assert (await api.get("/v1/hosts", params=url, headers=alice)).status_code == 403
        assert (await api.get("/v1/hosts", params=url, headers=admin)).status_code == 200
        for path in ("/ui/hosts", "/ui/workers", "/ui/fragments/hosts", "/ui/tenants"):
            assert (await api.get(path, headers=alice)).status_code == 403, path
            assert (await api.get(path, headers=admin)).status_code == 200, path
        assert "secret-of-team-b" not in (await api.get("/ui", headers=alice)).text


async def test_members_manage_no_keys_and_run_no_maintenance() -> None:
    async with dispatchers() as [api]:
        member = as_key(await new_key(api, "team-a"))
        made = await api.post("/v1/keys", json={"tenant": "team-a"}, headers=member)
        assert made.status_code == 403 and "admin" in made.json()["error"]["message"]
        for method, path in [
            ("GET", "/v1/keys"),
            ("DELETE", "/v1/keys/key_0123456789abcdef"),
            ("POST", "/v1/maintenance/reconcile"),
            ("GET", "/v1/workers"),
        ]:
            assert (await api.request(method, path, headers=member)).status_code == 403, path


async def test_a_key_works_at_once_is_never_shown_again_and_dies_everywhere_when_revoked() -> None:
    async with dispatchers(count=2) as [here, there]:
        key = await new_key(here, "team-a")
        for api in (here, there):  # both instances take it at once (and cache it)
            assert (await api.get("/v1/jobs", headers=as_key(key))).status_code == 200
        listed = await here.get("/v1/keys", headers=as_key(ADMIN_KEY))
        [entry] = listed.json()["keys"]
        assert key not in listed.text and "key" not in entry
        assert entry["tenant"] == "team-a" and entry["last_used_at"] is not None
        revoked = await here.delete(f"/v1/keys/{entry['id']}", headers=as_key(ADMIN_KEY))
        assert revoked.status_code == 204
        assert (await here.get("/v1/jobs", headers=as_key(key))).status_code == 401
        await asyncio.sleep(RECHECK_S + 0.1)  # the other instance trusted its read this long
        assert (await there.get("/v1/jobs", headers=as_key(key))).status_code == 401
        again = await here.delete(f"/v1/keys/{entry['id']}", headers=as_key(ADMIN_KEY))
        assert again.status_code == 404


@pytest.mark.parametrize(
    "body",
    [
        {"tenant": "Team A"},
        {"tenant": ""},
        {"tenant": "team-a", "role": "owner"},
        {"tenant": "team-a", "name": "a\nb"},
        {"tenant": "team-a", "extra": 1},
    ],
)
async def test_a_bad_key_request_is_a_422_naming_the_field(body: dict[str, object]) -> None:
    async with dispatchers() as [api]:
        answer = await api.post("/v1/keys", json=body, headers=as_key(ADMIN_KEY))
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"]["field"] in {"tenant", "role", "name", "extra"}


async def _signed_in(api: httpx.AsyncClient, key: str) -> httpx.AsyncClient:
    form = {"api_key": key}
    answer = await api.post("/ui/sign-in", data=form, headers={"Origin": "http://t"})
    assert answer.status_code == 303, answer.text
    return api


async def test_the_dashboard_shows_a_member_its_tenants_jobs_and_an_admin_all() -> None:
    async with dispatchers() as [api]:
        alice, bob = await new_key(api, "team-a"), await new_key(api, "team-b")
        a_job = (await api.post("/v1/jobs", json=JOB, headers=as_key(alice))).json()["id"]
        b_job = (await api.post("/v1/jobs", json=JOB, headers=as_key(bob))).json()["id"]
        await _signed_in(api, bob)
        home = await api.get("/ui")
        assert b_job in home.text and a_job not in home.text
        assert 'name="tenant"' not in home.text  # a member has nothing to filter
        assert (await api.get(f"/ui/jobs/{a_job}")).status_code == 404
        assert (await api.get(f"/ui/jobs/{b_job}")).status_code == 200
        api.cookies.clear()
        await _signed_in(api, ADMIN_KEY)
        home = await api.get("/ui")
        assert a_job in home.text and b_job in home.text
        only_a = await api.get("/ui", params={"tenant": "team-a"})
        assert a_job in only_a.text and b_job not in only_a.text
        assert 'name="tenant" value="team-a"' in only_a.text
        assert "tenant=team-a" in only_a.text  # its polls keep the filter
        poll = await api.get(
            "/ui/fragments/overview",
            params={"page_token": "", "tenant": "team-a"},
            headers={"HX-Request": "true"},
        )
        assert poll.status_code == 200 and a_job in poll.text and b_job not in poll.text
        unfiltered = await api.get(
            "/ui/fragments/overview", params={"page_token": "", "tenant": ""}
        )
        assert a_job in unfiltered.text and b_job in unfiltered.text


async def test_a_scheduler_key_cannot_sign_in_to_the_dashboard() -> None:
    async with dispatchers() as [api]:
        scheduler = await new_key(api, "team-a", "scheduler")
        form = {"api_key": scheduler}
        answer = await api.post("/ui/sign-in", data=form, headers={"Origin": "http://t"})
        assert answer.status_code == 401


async def serve_every_page(store: MemoryJobStore, job_id: str) -> int:
    """Play the worker: every page of the job answered 200; how many pages were served."""
    now = datetime.now(UTC)
    served = 0
    for batch_id, batch in store.batches[job_id].items():
        claim = await store.claim_batch(
            BatchClaim(job_id, batch_id, now, now + timedelta(seconds=30))
        )
        assert isinstance(claim, Claimed)
        ok = TaskOutcome(TaskStatus.SUCCEEDED, http_status=200, elapsed_ms=5)
        await as_a_worker(store).settle(
            claim.handle, [FinishTask(i.task_id, ok) for i in batch.items], now
        )
        served += len(batch.items)
    return served


async def test_past_its_daily_quota_a_tenant_gets_a_429_naming_it_and_others_go_on() -> None:
    store = MemoryJobStore()
    async with dispatchers(store=store) as [api]:
        alice, bob = await new_key(api, "team-a"), await new_key(api, "team-b")
        quota = {"pages_per_day": 4, "pages_in_flight": 2}
        set_quota = await api.put("/v1/tenants/team-a", json=quota, headers=as_key(ADMIN_KEY))
        assert set_quota.status_code == 200 and set_quota.json()["own_quota"]
        member_set = await api.put("/v1/tenants/team-a", json=quota, headers=as_key(alice))
        assert member_set.status_code == 403
        job = (await api.post("/v1/jobs", json=JOB, headers=as_key(alice))).json()["id"]
        served = await serve_every_page(store, job)
        usage = (await api.get("/v1/usage", headers=as_key(alice))).json()["usage"]
        assert [u["tenant"] for u in usage] == ["team-a"]
        assert usage[0]["pages_today"] == served == 2
        assert usage[0]["quota"] == quota and usage[0]["pages_in_flight"] == 0
        second = (await api.post("/v1/jobs", json=JOB, headers=as_key(alice))).json()["id"]
        await serve_every_page(store, second)  # its 2 pages and the first's: the quota's 4
        refused = await api.post("/v1/jobs", json=JOB, headers=as_key(alice))
        assert refused.status_code == 429, refused.text
        assert refused.json()["error"]["field"] == "pages_per_day"
        assert "pages_per_day" in refused.json()["error"]["message"]
        assert 0 < int(refused.headers["Retry-After"]) <= 86_401
        scrape = await api.post(
            "/v1/scrape", json={"url": "http://127.0.0.1:9/x"}, headers=as_key(alice)
        )
        assert scrape.status_code == 429
        # another tenant is not held back, and sees its own figures only
        assert (await api.post("/v1/jobs", json=JOB, headers=as_key(bob))).status_code == 202
        bobs = (await api.get("/v1/usage", headers=as_key(bob))).json()["usage"]
        assert [(u["tenant"], u["pages_today"]) for u in bobs] == [("team-b", 0)]
        everyone = (await api.get("/v1/usage", headers=as_key(ADMIN_KEY))).json()["usage"]
        assert {u["tenant"]: u["pages_today"] for u in everyone} == {"default": 0, "team-a": 4}
        listed = (await api.get("/v1/tenants", headers=as_key(ADMIN_KEY))).json()
        assert listed["defaults"] == {"pages_per_day": 0, "pages_in_flight": 0}
        assert listed["tenants"] == [{"tenant": "team-a", "quota": quota, "own_quota": True}]


async def test_stats_are_the_tenants_own_and_an_admin_sees_every_tenants() -> None:
    store = MemoryJobStore()
    async with dispatchers(store=store) as [api]:
        alice, bob = await new_key(api, "team-a"), await new_key(api, "team-b")
        job = (await api.post("/v1/jobs", json=JOB, headers=as_key(alice))).json()["id"]
        await serve_every_page(store, job)

        async def succeeded(key: str, **params: str) -> int:
            stats = await api.get("/v1/stats", params=params, headers=as_key(key))
            assert stats.status_code == 200, stats.text
            return int(stats.json()["tasks"]["succeeded"])

        assert await succeeded(alice) == 2
        assert await succeeded(bob) == 0
        assert await succeeded(ADMIN_KEY) == 2
        assert await succeeded(ADMIN_KEY, tenant="team-b") == 0
        credits = await api.get("/v2/team/credit-usage", headers=as_key(bob))
        assert credits.json()["data"]["creditsUsed"] == 0
        credits = await api.get("/v2/team/credit-usage", headers=as_key(alice))
        assert credits.json()["data"]["creditsUsed"] == 2


async def test_dead_letters_are_the_tenants_own() -> None:
    store = MemoryJobStore()
    async with dispatchers(store=store) as [api]:
        alice, bob = await new_key(api, "team-a"), await new_key(api, "team-b")
        job = (await api.post("/v1/jobs", json=JOB, headers=as_key(alice))).json()["id"]
        now = datetime.now(UTC)
        for batch_id, batch in store.batches[job].items():
            claim = await store.claim_batch(
                BatchClaim(job, batch_id, now, now + timedelta(seconds=30))
            )
            assert isinstance(claim, Claimed)
            dead = TaskOutcome(TaskStatus.DEAD_LETTERED, error="http 500")
            await as_a_worker(store).settle(
                claim.handle, [FinishTask(i.task_id, dead) for i in batch.items], now
            )

        async def letters(key: str, **params: str) -> set[str]:
            page = await api.get("/v1/dead-letters", params=params, headers=as_key(key))
            assert page.status_code == 200, page.text
            return {letter["job_id"] for letter in page.json()["dead_letters"]}

        assert await letters(alice) == {job}
        assert await letters(bob) == set()
        assert await letters(bob, tenant="team-a") == set()  # a member's filter is its own
        assert await letters(ADMIN_KEY) == {job}
        assert await letters(ADMIN_KEY, tenant="team-a") == {job}
        assert await letters(ADMIN_KEY, tenant="team-b") == set()
        replay = await api.post(
            "/v1/dead-letters:replay", json={"tenant": "team-b"}, headers=as_key(ADMIN_KEY)
        )
        assert replay.status_code == 200 and replay.json()["replayed"] == 0
        replay = await api.post("/v1/dead-letters:replay", json={}, headers=as_key(bob))
        assert replay.status_code == 200 and replay.json()["replayed"] == 0  # not B's to replay
        assert await letters(alice) == {job}
