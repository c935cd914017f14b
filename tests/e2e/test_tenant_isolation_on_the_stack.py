"""Tenants on the real stack (Firestore and Pub/Sub emulators, a worker, a real local site),
in api_key mode with two dispatcher processes: keys made through the API work at once on both
and a revoked one is refused by both within seconds; a tenant's usage equals the pages the
site served for it, its daily quota refuses the next submission with a 429; another tenant's
job is a 404, its lists, stats and dashboard hold none of the first's."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner, Result

from scrapejobs_client.cli import app
from scrapejobs_devstack.processes import free_port
from scrapejobs_devstack.stack import Stack
from support.jobs import stats_when, wait_finished
from support.lone_stack import lone_stack
from support.site import Site

pytestmark = [pytest.mark.emulators, pytest.mark.stack]

ADMIN_KEY = "sj_tenants-e2e-admin-key-0123456789abcdefghijklmnopqrstuvwxyz"
RECHECK_S = 1.0


@pytest.fixture(scope="module")
def dispatchers(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    """Two dispatcher processes and a worker of their own project."""
    from scrapejobs_dispatcher.tenants.api_keys import hash_api_key

    env = {
        "SCRAPEJOBS_AUTH_MODE": "api_key",
        "SCRAPEJOBS_API_KEY_HASHES": hash_api_key(ADMIN_KEY),
        "SCRAPEJOBS_API_KEY_RECHECK_S": str(RECHECK_S),
        "SCRAPEJOBS_QUOTA_RECHECK_S": "0",
        "SCRAPEJOBS_BATCH_SIZE": "10",  # a 600-URL job is 60 batches of one host
    }
    logs: Path = tmp_path_factory.mktemp("tenant-logs")
    with lone_stack(stack, "scrapejobs-tenants", logs, env) as lone:
        config = dataclasses.replace(lone.config, dispatcher_port=free_port())
        second = Stack(config, pubsub=stack.pubsub, firestore=stack.firestore)
        second.start_dispatcher()
        try:
            yield [lone.config.dispatcher_url, config.dispatcher_url]
        finally:
            if second.dispatcher is not None:
                second.dispatcher.stop()


@pytest.fixture
async def apis(dispatchers: list[str]) -> AsyncIterator[list[httpx.AsyncClient]]:
    clients = [httpx.AsyncClient(base_url=url, timeout=30) for url in dispatchers]
    yield clients
    for client in clients:
        await client.aclose()


def key(value: str) -> dict[str, str]:
    return {"X-API-Key": value}


async def new_key(api: httpx.AsyncClient, tenant: str) -> tuple[str, str]:
    made = await api.post("/v1/keys", json={"tenant": tenant}, headers=key(ADMIN_KEY))
    assert made.status_code == 201, made.text
    return made.json()["key"], made.json()["id"]


async def test_keys_quotas_usage_and_isolation_across_dispatchers(
    apis: list[httpx.AsyncClient], site: Site
) -> None:
    here, there = apis
    suffix = random.randrange(10**6)
    alice, _ = await new_key(here, f"a-{suffix}")
    bob, bob_id = await new_key(here, f"b-{suffix}")
    for api in apis:  # a new key works at once on every process
        assert (await api.get("/v1/jobs", headers=key(alice))).status_code == 200
    quota = {"pages_per_day": 5}
    assert (
        await here.put(f"/v1/tenants/a-{suffix}", json=quota, headers=key(ADMIN_KEY))
    ).status_code == 200

    first = 900_000_000 + suffix * 10
    paths = [f"/product/{first + n}" for n in range(5)]
    body = {"urls": [f"{site.url}{path}" for path in paths], "extract": {"t": {"css": "h1::text"}}}
    made = await there.post("/v1/jobs", json=body, headers=key(alice))
    assert made.status_code == 202, made.text
    job_id = made.json()["id"]
    async with httpx.AsyncClient(base_url=here.base_url, headers=key(alice)) as as_alice:
        done = await wait_finished(as_alice, job_id)
    assert done["counts"]["succeeded"] == 5

    served = sum(site.count(path) for path in paths)

    async def alices_usage() -> list[dict[str, Any]]:
        answer: list[dict[str, Any]] = (await here.get("/v1/usage", headers=key(alice))).json()[
            "usage"
        ]
        return answer

    usage = await stats_when(alices_usage, lambda now: now[0]["pages_today"] == served)
    assert [(u["tenant"], u["pages_today"]) for u in usage] == [(f"a-{suffix}", served)]
    over = await there.post("/v1/jobs", json=body, headers=key(alice))
    assert over.status_code == 429, over.text
    assert over.json()["error"]["field"] == "pages_per_day" and int(over.headers["Retry-After"])

    # the other tenant sees nothing of it, anywhere
    for method, path in [
        ("GET", f"/v1/jobs/{job_id}"),
        ("GET", f"/v1/jobs/{job_id}/results"),
        ("GET", f"/v1/jobs/{job_id}/results:export"),
        ("POST", f"/v1/jobs/{job_id}:retry"),
        ("DELETE", f"/v1/jobs/{job_id}"),
    ]:
        assert (await there.request(method, path, headers=key(bob))).status_code == 404
    listed = (await here.get("/v1/jobs", headers=key(bob))).json()["jobs"]
    assert job_id not in {job["id"] for job in listed}
    assert (await here.get("/v1/stats", headers=key(bob))).json()["tasks"]["succeeded"] == 0
    assert (await here.get("/v1/stats", headers=key(alice))).json()["tasks"]["succeeded"] == 5
    everyone = (await here.get("/v1/jobs", headers=key(ADMIN_KEY))).json()["jobs"]
    assert job_id in {job["id"] for job in everyone}
    signed = await there.post(
        "/ui/sign-in", data={"api_key": bob}, headers={"Origin": str(there.base_url)}
    )
    assert signed.status_code == 303
    assert job_id not in (await there.get("/ui")).text

    # revoked on one process: refused by both within the recheck time
    revoked = await here.delete(f"/v1/keys/{bob_id}", headers=key(ADMIN_KEY))
    assert revoked.status_code == 204
    deadline = time.monotonic() + RECHECK_S + 5
    refused: set[int] = set()
    while time.monotonic() < deadline and len(refused) < len(apis):
        for index, api in enumerate(apis):
            if (await api.get("/v1/jobs", headers=key(bob))).status_code == 401:
                refused.add(index)
        await asyncio.sleep(0.2)
    assert refused == {0, 1}
    while time.monotonic() < deadline and (await there.get("/ui")).status_code != 303:
        await asyncio.sleep(0.2)
    assert (await there.get("/ui")).status_code == 303  # its dashboard session ended with it
    listed_keys = await here.get("/v1/keys", headers=key(ADMIN_KEY))
    assert alice not in listed_keys.text and bob not in listed_keys.text


async def test_a_tenant_never_has_more_pages_in_flight_than_its_cap(
    apis: list[httpx.AsyncClient], site: Site
) -> None:
    here, _ = apis
    tenant = f"c-{random.randrange(10**6)}"
    member, _ = await new_key(here, tenant)
    cap = {"pages_per_day": 0, "pages_in_flight": 2}
    assert (
        await here.put(f"/v1/tenants/{tenant}", json=cap, headers=key(ADMIN_KEY))
    ).status_code == 200
    urls = [f"{site.url}/conc/{tenant}-{n}?s=0.3" for n in range(12)]
    with site.lock:
        site.max_in_flight = 0
    made = await here.post("/v1/jobs", json={"urls": urls}, headers=key(member))
    assert made.status_code == 202, made.text
    async with httpx.AsyncClient(base_url=here.base_url, headers=key(member)) as as_member:
        done = await wait_finished(as_member, made.json()["id"])
    assert done["counts"]["succeeded"] == 12
    assert site.max_in_flight == 2  # its cap, used, never passed (the host allows 8)
    usage = (await here.get("/v1/usage", headers=key(member))).json()["usage"]
    assert usage[0]["quota"]["pages_in_flight"] == 2 and usage[0]["pages_today"] == 12


async def test_a_large_job_of_one_tenant_never_keeps_another_tenants_small_jobs_waiting(
    apis: list[httpx.AsyncClient], site: Site
) -> None:
    """X's 600 URLs of the site (60 batches: 4 in the broker at a time, the rest held), then
    Y's one-URL jobs of the same site: they end while X has most of its pages still to do,
    not behind the whole of X's job; X alone had every slot of the host."""
    here, _ = apis
    run = random.randrange(10**6)
    x_key, _ = await new_key(here, f"x-{run}")
    y_key, _ = await new_key(here, f"y-{run}")
    large = [f"{site.url}/conc/x{run}-{n}?s=0.05" for n in range(600)]
    with site.lock:
        site.max_in_flight = 0
    made = await here.post("/v1/jobs", json={"urls": large}, headers=key(x_key))
    assert made.status_code == 202, made.text
    x_id = made.json()["id"]

    async def x_done() -> int:
        job = (await here.get(f"/v1/jobs/{x_id}", headers=key(x_key))).json()
        return int(job["counts"]["succeeded"])

    while await x_done() < 40:  # X holds the host
        await asyncio.sleep(0.05)
    assert site.max_in_flight == 8  # alone, X had every slot of the host
    small = []
    for n in range(5):
        body = {"url": f"{site.url}/conc/y{run}-{n}?s=0.05"}
        answer = await here.post("/v1/jobs", json=body, headers=key(y_key))
        assert answer.status_code == 202, answer.text
        small.append(answer.json()["id"])
    async with httpx.AsyncClient(base_url=here.base_url, headers=key(y_key)) as as_y:
        for job_id in small:
            assert (await wait_finished(as_y, job_id, timeout_s=60))["counts"]["succeeded"] == 1
    assert await x_done() < 450  # Y's jobs did not wait behind the rest of X's
    async with httpx.AsyncClient(base_url=here.base_url, headers=key(x_key)) as as_x:
        assert (await wait_finished(as_x, x_id, timeout_s=180))["counts"]["succeeded"] == 600


def test_the_cli_makes_lists_and_revokes_keys_and_shows_usage(dispatchers: list[str]) -> None:
    runner = CliRunner()

    def run(*args: str, key_value: str = ADMIN_KEY) -> Result:
        arguments = ["--api", dispatchers[0], "--api-key", key_value, *args]
        return runner.invoke(app, arguments, env={"COLUMNS": "400"}, catch_exceptions=False)

    tenant = f"cli-{random.randrange(10**6)}"
    made = run("keys", "create", tenant, "--name", "from the cli", "--json")
    assert made.exit_code == 0, made.output
    created = json.loads(made.stdout)
    assert created["key"].startswith("sj_") and created["tenant"] == tenant
    listed = run("keys", "ls", "--tenant", tenant)
    assert created["id"] in listed.stdout and "from the cli" in listed.stdout
    assert created["key"] not in listed.stdout
    assert run("quota", tenant, "--pages-per-day", "100").exit_code == 0
    mine = run("usage", "--json", key_value=created["key"])
    assert mine.exit_code == 0, mine.output
    [usage] = json.loads(mine.stdout)["usage"]
    assert usage["tenant"] == tenant and usage["quota"]["pages_per_day"] == 100
    refused = run("keys", "ls", key_value=created["key"])  # a member manages no keys
    assert refused.exit_code != 0 and "admin" in refused.output
    assert run("keys", "revoke", created["id"]).exit_code == 0


async def test_keys_live_where_only_the_dispatcher_may_and_older_ones_move_there(
    stack: Stack, tmp_path: Path
) -> None:
    """A key a release before the identity database stored in the main database still works
    after the upgrade and is then found only in the identity database, beside new keys."""
    from google.cloud import firestore

    from scrapejobs_dispatcher.tenants.api_keys import generate_api_key, hash_api_key
    from support.lone_stack import lone_dispatcher

    project = f"scrapejobs-identities-{random.randrange(10**6)}"
    older, older_digest = generate_api_key()
    main = firestore.AsyncClient(project=project)
    identities = firestore.AsyncClient(project=project, database="scrapejobs-identities")
    older_record = {"id": "key_older", "tenant": "older", "role": "member", "name": ""}
    await (
        main.collection("api_keys")
        .document(older_digest)
        .set({**older_record, "created_at": datetime.now(UTC)})
    )
    env = {"SCRAPEJOBS_AUTH_MODE": "api_key", "SCRAPEJOBS_API_KEY_HASHES": hash_api_key(ADMIN_KEY)}
    with lone_dispatcher(stack, project, tmp_path, env) as url:
        async with httpx.AsyncClient(base_url=url, timeout=30) as api:
            assert (await api.get("/v1/jobs", headers=key(older))).status_code == 200
            newer, _ = await new_key(api, "newer")
    try:
        kept = {s.id async for s in identities.collection("api_keys").stream()}
        assert kept == {older_digest, hash_api_key(newer)}
        assert [s.id async for s in main.collection("api_keys").stream()] == []
    finally:
        main.close()
        identities.close()
