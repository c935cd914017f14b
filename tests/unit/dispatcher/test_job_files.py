"""A job's files (screenshots) are served to the job's tenant only, for the job's retention:
another tenant's key, an expired job, a name that is no file, a deployment without a file
store: 404; a job asking for a screenshot on a deployment without one: 422 naming it."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import httpx

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_dispatcher.tenants.api_keys import generate_api_key
from scrapejobs_shared.adapters.memory.file_store import MemoryFileStore
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.ports.file_store import file_key
from support.memory_dispatcher import memory_client

ADMIN_KEY, ADMIN_DIGEST = generate_api_key()
IMAGE = b"\x89PNG\r\n\x1a\n image"


async def _key(client: httpx.AsyncClient, tenant: str) -> dict[str, str]:
    made = await client.post("/v1/keys", json={"tenant": tenant}, headers={"X-API-Key": ADMIN_KEY})
    return {"X-API-Key": made.json()["key"]}


async def test_a_file_is_the_job_s_tenant_s_for_the_job_s_retention() -> None:
    store, files = MemoryJobStore(), MemoryFileStore()
    settings = DispatcherSettings(
        auth_mode="api_key", api_key_hashes=ADMIN_DIGEST, files_bucket="b", coalesce_window_ms=0
    )
    async with memory_client(store, settings, file_store=files) as client:
        team_a, team_b = await _key(client, "team-a"), await _key(client, "team-b")
        body = {"url": "http://127.0.0.1:9/p", "options": {"formats": ["screenshot"]}}
        job = (await client.post("/v1/jobs", json=body, headers=team_a)).json()
        assert job["rendered"] is True  # a screenshot renders the job
        assert store.jobs[job["id"]].spec.options.render.block == ["media"]  # images shown
        expire_at = store.jobs[job["id"]].expire_at
        key = file_key("team-a", job["id"], "task1", "screenshot.png")
        await files.put(key, IMAGE, "image/png", expire_at)
        path = f"/v1/jobs/{job['id']}/files/task1/screenshot.png"

        served = await client.get(path, headers=team_a)
        assert served.status_code == 200 and served.content == IMAGE
        assert served.headers["content-type"] == "image/png"
        assert served.headers["x-content-type-options"] == "nosniff"
        assert (await client.get(path, headers=team_b)).status_code == 404  # not theirs
        assert (await client.get(path)).status_code == 401
        missing = path.replace("screenshot.png", "screenshot.jpeg")
        assert (await client.get(missing, headers=team_a)).json()["error"]["code"] == "not_found"
        bad = path.replace("screenshot.png", "screenshot.exe")
        assert (await client.get(bad, headers=team_a)).status_code == 422
        # the job's retention over: its files are not served, whatever the store holds
        past = datetime.now(UTC) - timedelta(days=1)
        store.jobs[job["id"]] = replace(store.jobs[job["id"]], expire_at=past)
        assert (await client.get(path, headers=team_a)).status_code == 404


async def test_without_a_file_store_a_screenshot_is_refused_naming_the_setting() -> None:
    async with memory_client(MemoryJobStore()) as client:
        body = {"url": "http://127.0.0.1:9/p", "options": {"formats": ["markdown", "screenshot"]}}
        refused = await client.post("/v1/jobs", json=body)
        assert refused.status_code == 422
        error = refused.json()["error"]
        assert error["field"] == "options.formats" and "SCRAPEJOBS_FILES_BUCKET" in error["message"]
