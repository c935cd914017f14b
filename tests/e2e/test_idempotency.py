"""Idempotency-Key on the real stack: concurrent submissions with one key make one job."""

from __future__ import annotations

import asyncio
import uuid

import pytest

pytestmark = [pytest.mark.emulators, pytest.mark.stack]


async def test_twenty_concurrent_submissions_with_one_key_make_one_job(api, site) -> None:
    body = {"urls": [f"{site.url}/product/{n}" for n in range(3)]}
    headers = {"Idempotency-Key": f"e2e-{uuid.uuid4().hex}"}
    responses = await asyncio.gather(
        *(api.post("/v1/jobs", json=body, headers=headers) for _ in range(20))
    )
    accepted = [r for r in responses if r.status_code == 202]
    assert all(r.status_code in (202, 409) for r in responses), [r.text for r in responses]
    assert {r.json()["id"] for r in accepted} and len({r.json()["id"] for r in accepted}) == 1
    created = [r for r in accepted if "idempotent-replayed" not in r.headers]
    assert len(created) <= 1

    replay = await api.post("/v1/jobs", json=body, headers=headers)
    assert replay.status_code == 202 and replay.headers["idempotent-replayed"] == "true"
    assert replay.json()["id"] == accepted[0].json()["id"]
    listed = (await api.get("/v1/jobs", params={"page_size": 100})).json()["jobs"]
    mine = [j for j in listed if j["id"] == replay.json()["id"]]
    assert len(mine) == 1
    other = await api.post("/v1/jobs", json={"urls": [f"{site.url}/product/9"]}, headers=headers)
    assert other.status_code == 422 and other.json()["error"]["field"] == "Idempotency-Key"
