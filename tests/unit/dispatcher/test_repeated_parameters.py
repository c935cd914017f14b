"""A query parameter or Idempotency-Key given twice is a 422 naming it (the framework would act
on the last one; the schema fuzz test found ``?tenant=<bad>&tenant=null`` accepted)."""

from __future__ import annotations

from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from support.memory_dispatcher import memory_client

BODY = {"urls": ["http://a.example/"]}


async def test_a_repeated_query_parameter_is_refused_by_name() -> None:
    store = MemoryJobStore()
    async with memory_client(store) as api:
        response = await api.post("/v1/jobs?tenant=-5&tenant=null", json=BODY)
        assert response.status_code == 422
        assert response.json()["error"]["field"] == "tenant"
        listed = await api.get("/v1/jobs", params=[("status", "queued"), ("status", "failed")])
        assert listed.status_code == 422 and listed.json()["error"]["field"] == "status"
        assert store.jobs == {}  # nothing was submitted
        assert (await api.post("/v1/jobs?tenant=null", json=BODY)).status_code == 202


async def test_a_repeated_idempotency_key_is_refused() -> None:
    store = MemoryJobStore()
    async with memory_client(store) as api:
        headers = [("Idempotency-Key", "a"), ("Idempotency-Key", "b")]
        response = await api.post("/v1/jobs", json=BODY, headers=headers)
        assert response.status_code == 422
        assert response.json()["error"]["field"] == "idempotency-key"
        assert store.jobs == {}
