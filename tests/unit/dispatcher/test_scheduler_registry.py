"""A scheduler key sends only the schedules registered for it (SCRAPEJOBS_SCHEDULES, written
by Terraform): the registered job name, for its tenant, with its body byte for byte; without a
registry, only for its own tenant."""

from __future__ import annotations

import hashlib
import json

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from support.memory_dispatcher import memory_client

KEY = "sj_local_scheduler_registry-test"
BODY = json.dumps({"urls": ["http://127.0.0.1:9/a"]}, separators=(",", ":")).encode()
RUN = {
    "X-API-Key": KEY,
    "Content-Type": "application/json",
    "X-CloudScheduler-JobName": "sj-nightly",
    "X-CloudScheduler-ScheduleTime": "2026-11-28T00:00:00Z",
}


def settings(schedules: dict[str, object] | None) -> DispatcherSettings:
    return DispatcherSettings(
        auth_mode="api_key",
        scheduler_key_hashes=hashlib.sha256(KEY.encode()).hexdigest(),
        schedules=json.dumps(schedules) if schedules is not None else "",
        coalesce_window_ms=0,
    )


async def test_a_scheduler_key_sends_only_its_registered_schedules() -> None:
    registry = {"sj-nightly": {"tenant": "team-a", "body_sha256": hashlib.sha256(BODY).hexdigest()}}
    async with memory_client(MemoryJobStore(), settings(registry)) as api:
        ran = await api.post("/v1/jobs?tenant=team-a", content=BODY, headers=RUN)
        assert ran.status_code == 202, ran.text
        assert ran.json()["tenant"] == "team-a"
        other_body = BODY.replace(b"/a", b"/b")
        for path, content, headers, why in [
            ("/v1/jobs?tenant=team-a", other_body, RUN, "not the body"),
            ("/v1/jobs?tenant=team-b", BODY, RUN, "another tenant"),
            (
                "/v1/jobs?tenant=team-a",
                BODY,
                RUN | {"X-CloudScheduler-JobName": "sj-other"},
                "not a registered schedule",
            ),
        ]:
            refused = await api.post(path, content=content, headers=headers)
            assert refused.status_code == 403 and why in refused.text, (why, refused.text)


async def test_without_a_registry_a_scheduler_key_submits_only_for_its_own_tenant() -> None:
    async with memory_client(MemoryJobStore(), settings(None)) as api:
        own = await api.post("/v1/jobs", content=BODY, headers=RUN)
        assert own.status_code == 202 and own.json()["tenant"] == "default"
        other = await api.post("/v1/jobs?tenant=team-b", content=BODY, headers=RUN)
        assert other.status_code == 403 and "own tenant" in other.text
