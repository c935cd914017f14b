"""Each proxy's counts in /v1/stats (admins): summed over the worker processes heard from in
the last 5 minutes, by label (never a credential); a member sees none (proxies, as hosts, are
every tenant's)."""

from __future__ import annotations

from datetime import timedelta

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_dispatcher.tenants.api_keys import generate_api_key
from scrapejobs_shared.adapters.memory.api_keys import MemoryApiKeyStore
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.domain.clock import utc_now
from scrapejobs_shared.domain.workers import ProxyUse, WorkerBeat
from support.memory_dispatcher import memory_client

ADMIN_KEY, ADMIN_DIGEST = generate_api_key()
DE, US = "http://de.example:3128", "socks5://us.example:1080"


def beat(worker: str, ago_s: float, *proxies: ProxyUse) -> WorkerBeat:
    now = utc_now()
    seen = now - timedelta(seconds=ago_s)
    return WorkerBeat(worker, "rev", seen - timedelta(hours=1), seen, proxies=proxies)


async def test_an_admin_sees_each_proxy_summed_over_live_workers_and_a_member_none() -> None:
    store = MemoryJobStore()
    await store.report(beat("w1", 1, ProxyUse(DE, 10, 1), ProxyUse(US, 4)))
    await store.report(beat("w2", 2, ProxyUse(DE, 5, 2)))
    await store.report(beat("gone", 3600, ProxyUse(DE, 1000)))  # not heard from for an hour
    settings = DispatcherSettings(auth_mode="api_key", api_key_hashes=ADMIN_DIGEST)
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    async with memory_client(store, settings, api_keys=MemoryApiKeyStore()) as api:
        made = await api.post("/v1/keys", json={"tenant": "acme"}, headers=admin)
        member = {"Authorization": f"Bearer {made.json()['key']}"}
        seen = (await api.get("/v1/stats", headers=admin)).json()
        theirs = (await api.get("/v1/stats", headers=member)).json()
    assert seen["proxies"] == [
        {"proxy": DE, "served": 15, "failed": 3},
        {"proxy": US, "served": 4, "failed": 0},
    ]
    assert theirs["proxies"] == []
