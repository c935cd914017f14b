"""The ``ai`` stage at submission: what it accepts, and a 422 naming the field otherwise."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.model_usage import ModelUsage
from scrapejobs_shared.domain.records import TaskOutcome
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.ports.batch_store import BatchClaim, Claimed
from support.memory_dispatcher import memory_client
from support.worker_store import as_a_worker

SCHEMA = {"type": "object", "properties": {"price": {"type": "number"}}, "required": ["price"]}
AI = {"prompt": "What does it cost?", "schema": SCHEMA}
WITH_AI = DispatcherSettings(auth_mode="none", dashboard_cache_s=0, ai_provider="openai")


def body(*stages: dict[str, Any]) -> dict[str, Any]:
    return {"url": "https://shop.example/p/1", "pipeline": list(stages)}


async def test_an_ai_stage_is_accepted_when_a_provider_is_configured() -> None:
    store = MemoryJobStore()
    async with memory_client(store, WITH_AI) as client:
        stages = ({"clean": {}}, {"ai": {**AI, "input": "text", "into": "answer"}})
        answer = await client.post("/v1/jobs", json=body(*stages))
        assert answer.status_code == 202, answer.text
        [job] = store.jobs.values()
        ai = job.spec.pipeline[1].options
        assert ai.input == "text" and ai.into == "answer" and ai.max_input_chars == 50_000
        assert ai.cache is True and ai.model is None


async def test_without_a_provider_an_ai_stage_is_refused_naming_it() -> None:
    async with memory_client(MemoryJobStore()) as client:
        for path in ("/v1/jobs", "/v1/scrape"):
            answer = await client.post(path, json=body({"clean": {}}, {"ai": AI}))
            assert answer.status_code == 422, answer.text
            error = answer.json()["error"]
            assert (
                error["field"] == "pipeline[1].ai" and "SCRAPEJOBS_AI_PROVIDER" in error["message"]
            )


@pytest.mark.parametrize(
    ("ai", "field"),
    [
        ({**AI, "schema": {"type": "array"}}, "pipeline[0].ai.schema"),
        ({**AI, "schema": {"type": "object", "properties": 3}}, "pipeline[0].ai.schema"),
        ({**AI, "prompt": ""}, "pipeline[0].ai.prompt"),
        ({**AI, "input": "html"}, "pipeline[0].ai.input"),
        ({**AI, "max_input_chars": 0}, "pipeline[0].ai.max_input_chars"),
        ({**AI, "into": "__x"}, "pipeline[0].ai.into"),
        ({**AI, "temperature": 1}, "pipeline[0].ai.temperature"),
        ({"prompt": "x"}, "pipeline[0].ai.schema"),
    ],
)
async def test_invalid_ai_options_are_a_422_naming_the_field(
    ai: dict[str, Any], field: str
) -> None:
    async with memory_client(MemoryJobStore(), WITH_AI) as client:
        answer = await client.post("/v1/jobs", json=body({"ai": ai}))
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"]["field"] == field, answer.json()


async def test_two_ai_stages_are_refused() -> None:
    async with memory_client(MemoryJobStore(), WITH_AI) as client:
        answer = await client.post("/v1/jobs", json=body({"ai": AI}, {"ai": AI}))
        assert answer.status_code == 422 and answer.json()["error"]["field"] == "pipeline"
        assert "at most one 'ai' stage" in answer.json()["error"]["message"]


async def test_the_openapi_document_offers_the_ai_stage_only_where_it_runs() -> None:
    async with memory_client(MemoryJobStore()) as client:
        schemas = (await client.get("/openapi.json")).json()["components"]["schemas"]
        assert "ai" not in schemas["Stage"]["properties"] and "AiOptions" not in schemas
    async with memory_client(MemoryJobStore(), WITH_AI) as client:
        schemas = (await client.get("/openapi.json")).json()["components"]["schemas"]
        assert schemas["Stage"]["properties"]["ai"]["$ref"].endswith("/AiOptions")
        assert schemas["AiOptions"]["properties"]["schema"]["properties"]["type"] == {
            "const": "object"
        }


async def test_usage_and_its_cost_show_on_the_job_and_in_stats() -> None:
    store = MemoryJobStore()
    priced = WITH_AI.model_copy(update={"ai_price_per_mtok_in": 0.15, "ai_price_per_mtok_out": 0.6})
    async with memory_client(store, priced) as client:
        answer = await client.post("/v1/jobs", json=body({"ai": AI}))
        job_id = answer.json()["id"]
        [batch_id] = store.batches[job_id]
        now = datetime.now(UTC)
        claim = await store.claim_batch(
            BatchClaim(job_id, batch_id, now, now + timedelta(seconds=30))
        )
        assert isinstance(claim, Claimed)
        [item] = claim.batch.items
        usage = ModelUsage(calls=2, cached=0, input_tokens=1_500_000, output_tokens=20_000)
        finish = FinishTask(item.task_id, TaskOutcome(TaskStatus.SUCCEEDED), usage=usage)
        await as_a_worker(store).settle(claim.handle, [finish], now, None)

        job = (await client.get(f"/v1/jobs/{job_id}")).json()
        expected = {"calls": 2, "cached": 0, "input_tokens": 1_500_000, "output_tokens": 20_000}
        assert job["ai_usage"] == expected | {"cost": 0.237}  # 0.225 in + 0.012 out
        stats = (await client.get("/v1/stats", params={"window": "5m"})).json()
        assert stats["ai"] == expected | {"cost": 0.237}

    async with memory_client(store, WITH_AI) as client:  # no prices: no cost
        assert (await client.get(f"/v1/jobs/{job_id}")).json()["ai_usage"]["cost"] is None
        assert (await client.get("/v1/stats")).json()["ai"]["cost"] is None


async def test_only_the_models_offered_here_may_be_named() -> None:
    offered = DispatcherSettings(
        auth_mode="none", ai_provider="openai", ai_model="small", ai_models="medium, large"
    )
    store = MemoryJobStore()
    async with memory_client(store, offered) as client:
        for model in ("small", "medium", "large"):
            answer = await client.post("/v1/jobs", json=body({"ai": {**AI, "model": model}}))
            assert answer.status_code == 202, answer.text
        dear = await client.post("/v1/jobs", json=body({"ai": {**AI, "model": "huge"}}))
        assert dear.status_code == 422, dear.text
        error = dear.json()["error"]
        assert error["field"] == "pipeline[0].ai.model"
        assert "'huge' is not offered here (offered: large, medium, small)" in error["message"]
    assert len(store.jobs) == 3
    anything = DispatcherSettings(auth_mode="none", ai_provider="openai")
    assert anything.offered_models() is None  # nothing configured: the provider decides
