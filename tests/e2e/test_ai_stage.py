"""The ``ai`` stage through the whole stack (emulators, dispatcher, worker) on a stack of its own
configured with the openai provider, against a loopback server speaking the chat completions
protocol (support/model_server.py): pages are fetched once on the fetch lane, handed on to the
processing lane, answered by the model in the stage's schema, checked by a later ``validate``
stage, and the job completes with every answer in its results. On that stack of its own,
firecrawl-py's usage calls report exactly what it did (pages fetched, tokens used, pages
waiting and active)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from scrapejobs_devstack.model_server import Answer, Failure, ModelServer
from scrapejobs_devstack.stack import Stack
from support.jobs import all_results, stats_when, submit, wait_finished
from support.lone_stack import lone_stack

pytestmark = [pytest.mark.emulators, pytest.mark.stack]

SCHEMA = {
    "type": "object",
    "properties": {"price": {"type": "number"}, "currency": {"type": "string"}},
    "required": ["price", "currency"],
}


@pytest.fixture(scope="module")
def model() -> Iterator[ModelServer]:
    with ModelServer(Answer(json.dumps({"price": 9.5, "currency": "USD"}), 40, 8)) as server:
        yield server


@pytest.fixture(scope="module")
def ai_stack(
    stack: Stack, model: ModelServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    ai = {
        "SCRAPEJOBS_AI_PROVIDER": "openai",
        "SCRAPEJOBS_AI_BASE_URL": f"{model.url}/v1",
        "SCRAPEJOBS_AI_MODEL": "loopback-model",
        "SCRAPEJOBS_AI_MAX_IN_FLIGHT": "2",
        # the slots a SIGKILLed worker held free within three calls' time
        "SCRAPEJOBS_AI_TIMEOUT_S": "5",
        "SCRAPEJOBS_AI_PRICE_PER_MTOK_IN": "2.5",
        "SCRAPEJOBS_AI_PRICE_PER_MTOK_OUT": "10",
        "SCRAPEJOBS_MAX_CONCURRENCY": "24",  # what /v2/concurrency-check reports
        "SCRAPEJOBS_PLAN_CREDITS": "5000",
    }
    # deliveries that meet a worker restarting (the SIGKILL test) are tried for longer than it
    # takes, as Pub/Sub's production backoff (10 s to 10 min) would; the emulator's is 1 s
    patient = dataclasses.replace(stack.config.topology, max_delivery_attempts=40)
    with lone_stack(
        stack,
        "scrapejobs-ai",
        tmp_path_factory.mktemp("ai-logs"),
        ai,
        worker_env=ai,
        topology=patient,
    ) as lone:
        yield lone


async def test_pages_are_answered_by_the_model_on_the_processing_lane(
    ai_stack: Stack, model: ModelServer, site
) -> None:
    tag = uuid.uuid4().hex[:6]
    paths = [f"/product/{n}" for n in range(70, 74)]
    before = {path: site.count(path) for path in paths}
    # a busy model first: asked again after its Retry-After, inside the stage
    model.steps[:0] = [Failure(429, {"Retry-After": "1"})]
    body = {
        "urls": [f"{site.url}{path}?t={tag}" for path in paths],
        "extract": {"title": {"css": "h1.title::text"}},
        "pipeline": [
            {"ai": {"prompt": "What does the product cost?", "schema": SCHEMA, "into": "offer"}},
            {"validate": {"schema": {"type": "object", "required": ["title", "offer"]}}},
        ],
    }
    async with httpx.AsyncClient(base_url=ai_stack.config.dispatcher_url, timeout=30) as api:
        job = await submit(api, body)
        final = await wait_finished(api, job["id"], timeout_s=120)
        assert final["counts"]["succeeded"] == 4 and final["counts"]["processing"] == 0, final
        # the provider's figures, once per page (the 429 was no answer)
        assert final["ai_usage"] == {
            "calls": 4,
            "cached": 0,
            "input_tokens": 160,
            "output_tokens": 32,
            "cost": 0.00072,  # 160 tokens at 2.5 a million, 32 at 10
        }
        results = await all_results(api, job["id"])
        page = await api.get(f"/ui/jobs/{job['id']}")
        assert "4 model calls, 0 reused; 160 tokens in, 32 out; cost 0.00072" in page.text

        async def ai_stats() -> dict[str, Any]:
            answer: dict[str, Any] = (await api.get("/v1/stats", params={"window": "5m"})).json()
            return answer["ai"]

        stats = await stats_when(ai_stats, lambda now: now["calls"] >= 4)
        assert stats["calls"] >= 4 and stats["input_tokens"] >= 160, stats  # with other tests'
        expected = (stats["input_tokens"] * 2.5 + stats["output_tokens"] * 10) / 1_000_000
        assert stats["cost"] == round(expected, 6), stats
        overview = await api.get("/ui/fragments/overview")
        assert "AI stage" in overview.text and f"cost {stats['cost']:.4g}" in overview.text
    for result in results:
        n = result["url"].split("/product/")[1].split("?")[0]
        assert result["data"] == {
            "title": f"Product {n}",
            "offer": {"price": 9.5, "currency": "USD"},
        }, result
    for path in paths:  # fetched once each: the model never made a page be fetched again
        assert site.count(path) - before[path] == 1, path
    asked = [r for r in model.received if r.path == "/v1/chat/completions"]
    contents = {r.body["messages"][1]["content"] for r in asked}
    for n in range(70, 74):  # each page's markdown went to the model, apart from the prompt
        assert any(c.startswith(f"# Product {n}\n") for c in contents), contents
    assert all(r.body["model"] == "loopback-model" for r in asked)
    assert all("What does the product cost?" in r.body["messages"][0]["content"] for r in asked)
    assert model.most_in_flight <= 2  # SCRAPEJOBS_AI_MAX_IN_FLIGHT


async def test_the_sdk_s_usage_calls_report_what_the_stack_did(
    ai_stack: Stack, model: ModelServer, site
) -> None:
    from firecrawl import Firecrawl

    app = Firecrawl(api_key="fc-local", api_url=ai_stack.config.dispatcher_url)
    credits, tokens = app.get_credit_usage(), app.get_token_usage()
    history = app.v2.get_credit_usage_historical().periods[0].creditsUsed
    tag = uuid.uuid4().hex[:6]
    body = {
        "urls": [f"{site.url}/product/{n}?t={tag}" for n in range(80, 83)],
        "pipeline": [{"ai": {"prompt": "What does it cost?", "schema": SCHEMA, "into": "o"}}],
    }
    slow = {"urls": [f"{site.url}/slow/{tag}-{n}?s=3" for n in range(4)]}
    async with httpx.AsyncClient(base_url=ai_stack.config.dispatcher_url, timeout=30) as api:
        # pages waiting and active: the queue is what the open job's counters say
        waiting = await submit(api, slow)
        deadline = time.monotonic() + 60
        while True:
            queue = await asyncio.to_thread(app.get_queue_status)
            counts = (await api.get(f"/v1/jobs/{waiting['id']}")).json()["counts"]
            if queue.active_jobs_in_queue and queue.active_jobs_in_queue == counts["running"]:
                break
            assert time.monotonic() < deadline, (queue, counts)
            await asyncio.sleep(0.2)
        assert queue.waiting_jobs_in_queue == counts["queued"]
        assert queue.jobs_in_queue == counts["queued"] + counts["running"]
        assert queue.max_concurrency == 24
        concurrency = await asyncio.to_thread(app.get_concurrency)
        assert concurrency.max_concurrency == 24 and concurrency.concurrency >= 0
        await wait_finished(api, waiting["id"], timeout_s=120)

        job = await submit(api, body)
        final = await wait_finished(api, job["id"], timeout_s=120)
        assert final["counts"]["succeeded"] == 3

    before = credits.plan_credits - credits.remaining_credits  # type: ignore[operator]

    async def credit_usage() -> Any:
        return await asyncio.to_thread(app.get_credit_usage)

    def spent(now: Any) -> int:
        return int(now.plan_credits - now.remaining_credits) - before

    after_credits = await stats_when(credit_usage, lambda now: spent(now) >= 3 + 4)
    after_tokens = app.get_token_usage()
    used = after_credits.plan_credits - after_credits.remaining_credits
    assert after_credits.plan_credits == 5000 and used - before == 3 + 4  # every page fetched
    assert after_tokens.remaining_tokens == tokens.remaining_tokens - 3 * (40 + 8)
    assert app.v2.get_credit_usage_historical().periods[0].creditsUsed == history + 7
    tokens_history = app.v2.get_token_usage_historical().periods[0].tokensUsed
    assert tokens_history == after_tokens.plan_tokens - after_tokens.remaining_tokens  # type: ignore[operator]
    queue = app.get_queue_status()
    assert queue.jobs_in_queue == 0 and queue.most_recent_success is not None
    assert app.get_concurrency().concurrency == 0


async def test_firecrawl_s_json_format_is_answered_by_the_ai_stage(
    ai_stack: Stack, model: ModelServer, site
) -> None:
    from firecrawl import Firecrawl

    app = Firecrawl(api_key="fc-local", api_url=ai_stack.config.dispatcher_url)
    url = f"{site.url}/product/76?t={uuid.uuid4().hex[:6]}"
    wanted = {"type": "json", "schema": SCHEMA, "prompt": "What does it cost?"}
    doc = await asyncio.to_thread(app.scrape, url, formats=["markdown", wanted], timeout=60000)

    assert doc.json == {"price": 9.5, "currency": "USD"}
    assert doc.markdown is not None and doc.markdown.startswith("# Product 76")
    asked = [r for r in model.received if r.path == "/v1/chat/completions"]
    assert any("What does it cost?" in r.body["messages"][0]["content"] for r in asked)


async def test_the_summary_format_is_answered_by_the_ai_stage(
    ai_stack: Stack, model: ModelServer, site
) -> None:
    from firecrawl import Firecrawl
    from firecrawl.v2.utils.error_handler import BadRequestError

    scripted = len(model.steps)
    model.steps[:0] = [Answer('{"text": "A product page."}')] * 2
    try:
        app = Firecrawl(api_key="fc-local", api_url=ai_stack.config.dispatcher_url)
        url = f"{site.url}/product/74?t={uuid.uuid4().hex[:6]}"
        doc = await asyncio.to_thread(app.scrape, url, formats=["summary"], timeout=60000)
        assert doc.summary == "A product page."
        asked = [r for r in model.received if r.path == "/v1/chat/completions"]
        assert "Summarize the page" in asked[-1].body["messages"][0]["content"]
        assert "Product 74" in asked[-1].body["messages"][1]["content"]  # its markdown, as data

        async with httpx.AsyncClient(base_url=ai_stack.config.dispatcher_url, timeout=60) as api:
            other = f"{site.url}/product/73?t={uuid.uuid4().hex[:6]}"  # not a cached answer
            body = {"url": other, "options": {"formats": ["summary"]}}
            native = await api.post("/v1/scrape", json=body)
            assert native.status_code == 200, native.text
            assert native.json()["result"]["data"] == {"summary": {"text": "A product page."}}
            mixed = {"url": url, "formats": ["summary", {"type": "json", "schema": SCHEMA}]}
            refused = await api.post("/v2/scrape", json=mixed)
        assert refused.status_code == 400 and "formats" in refused.json()["error"], refused.text
        with pytest.raises(BadRequestError):
            await asyncio.to_thread(app.scrape, url, formats=mixed["formats"])
    finally:
        del model.steps[: max(0, len(model.steps) - scripted)]  # what this test did not use


async def test_an_answer_outside_the_schema_fails_the_task_keeping_what_went_in(
    ai_stack: Stack, model: ModelServer, site
) -> None:
    model.steps[:0] = [Answer('{"price": "cheap"}'), Answer("not even JSON")]
    body = {
        "url": f"{site.url}/product/75?t={uuid.uuid4().hex[:6]}",
        "extract": {"title": {"css": "h1.title::text"}},
        "pipeline": [{"ai": {"prompt": "Price?", "schema": SCHEMA}}],
    }
    async with httpx.AsyncClient(base_url=ai_stack.config.dispatcher_url, timeout=30) as api:
        job = await submit(api, body)
        final = await wait_finished(api, job["id"], timeout_s=120)
        [result] = await all_results(api, job["id"])
    assert final["counts"]["failed"] == 1
    assert result["error"].startswith("ai_invalid_output"), result
    assert result["data"] == {"title": "Product 75"}


async def test_a_worker_killed_during_a_model_call_loses_and_doubles_nothing(
    ai_stack: Stack, model: ModelServer, site
) -> None:
    """SIGKILL of the worker while the model is thinking: the task still completes, its page
    was fetched once, and the usage counts the answer that was recorded, once."""
    path = f"/product/{random.randrange(10_000, 10**9)}"  # a page no other test asks for
    model.steps[:0] = [Answer(json.dumps({"price": 1.0, "currency": "EUR"}), 50, 5)]
    model.delay_s = 4.0  # the first call is in flight when the worker dies
    asked = len(model.received)
    body = {
        "url": f"{site.url}{path}",
        "pipeline": [{"ai": {"prompt": "Price?", "schema": SCHEMA}}],
    }
    base = ai_stack.config.dispatcher_url
    async with httpx.AsyncClient(base_url=base, timeout=30) as api:
        job = await submit(api, body)
        deadline = time.monotonic() + 60
        while len(model.received) == asked:  # the processing lane is asking the model
            assert time.monotonic() < deadline, "the model was never asked"
            await asyncio.sleep(0.05)
        assert ai_stack.worker is not None
        ai_stack.worker.kill()  # SIGKILL, mid-call
        model.delay_s = 0.0
        ai_stack.start_worker()
        # the emulator drops what it pushes while the worker is down: reconcile finds the
        # batch stalled (it does every few minutes in production, every 30 s under make dev)
        final: dict[str, Any] = {}
        while not final or final["status"] != "completed":
            assert time.monotonic() < deadline + 60, final
            await api.post("/v1/maintenance/reconcile", params={"older_than_s": 1})
            await asyncio.sleep(1.0)
            final = (await api.get(f"/v1/jobs/{job['id']}")).json()
        [result] = await all_results(api, job["id"])
    assert final["counts"]["succeeded"] == 1 and final["counts"]["processing"] == 0, (final, result)
    assert result["data"]["ai"]["currency"] in ("EUR", "USD")
    assert site.count(path) == 1  # the page was fetched once
    usage = final["ai_usage"]
    assert usage["calls"] + usage["cached"] == 1, usage  # the recorded answer, counted once
