"""The two lanes over in-memory adapters: the fetch lane hands a page with an ``ai`` stage on to
the processing lane (its markdown as the model's input), which asks the model once, stores the
checked answer, runs the later stages and finishes the task; a busy model spends no attempt."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pytest

from scrapejobs_shared.adapters.budgeted_processes import BudgetedProcesses
from scrapejobs_shared.adapters.memory.answer_cache import MemoryAnswerCache
from scrapejobs_shared.adapters.memory.host_gate import MemoryHostGate
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.adapters.memory.webhooks import MemoryWebhookOutbox
from scrapejobs_shared.delivery.job_events import JobEvents
from scrapejobs_shared.domain.model_usage import ModelUsage
from scrapejobs_shared.domain.records import Handoff
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.messaging.task_message import PushedMessage
from scrapejobs_shared.politeness.host_gate import Permit, Throttle
from scrapejobs_shared.ports.answer_cache import CachedAnswer
from scrapejobs_shared.ports.budgeted_work import Budget
from scrapejobs_worker.ai import model_slots
from scrapejobs_worker.ai.ai_answers import AiAnswers, AnswerPolicy
from scrapejobs_worker.ai.model_port import ModelBusy, ModelCall, ModelReply
from scrapejobs_worker.ai.model_slots import ModelSlots
from scrapejobs_worker.delivery.push_delivery import BatchPolicy
from scrapejobs_worker.extraction.stage_work import StageWork
from scrapejobs_worker.lanes.processing_lane import ProcessingLane
from support.worker_fakes import (
    NOW,
    ScriptedFetcher,
    build_processor,
    inline_stages,
    push,
    setup_job,
)

SCHEMA = {
    "type": "object",
    "properties": {"greeting": {"type": "string"}},
    "required": ["greeting"],
}


def body(**ai: Any) -> dict[str, Any]:
    return {
        "url": "http://a.example/",
        "extract": {"h": {"css": "h1::text"}},
        "pipeline": [
            {"ai": {"prompt": "What does it say?", "schema": SCHEMA, "into": "said", **ai}},
            {"transform": {"rename": {"h": "heading"}}},
        ],
    }


class ScriptedModel:
    """The model port, answering with the next step (the last repeats)."""

    provider = "fake"

    def __init__(self, *steps: str | Exception) -> None:
        self.steps = list(steps)
        self.calls: list[ModelCall] = []

    async def reply(self, call: ModelCall) -> ModelReply:
        self.calls.append(call)
        step = self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]
        if isinstance(step, Exception):
            raise step
        return ModelReply(step, "fake-1", input_tokens=10, output_tokens=3)

    async def aclose(self) -> None:
        return None


async def _no_sleep(_: float) -> None:
    return None


def processing(
    store: MemoryJobStore,
    model: ScriptedModel,
    cache: MemoryAnswerCache | None = None,
    events: JobEvents | None = None,
    stages: StageWork | None = None,
) -> ProcessingLane:
    answers = AiAnswers(
        model, "fake-1", stages or inline_stages(), AnswerPolicy(attempts=2), sleep=_no_sleep
    )
    slots = ModelSlots(MemoryHostGate(), model.provider, 2, lambda: NOW, call_timeout_s=10)
    policy = BatchPolicy(lease_s=6)
    return ProcessingLane(store, answers, slots, lambda: NOW, policy, events, cache)


async def _fetched(store: MemoryJobStore, urls: int = 1, **ai: Any) -> PushedMessage:
    """The fetch lane's run of the job; returns the message it handed on."""
    await setup_job(store, body(**ai), urls=urls)
    publisher = MemoryTaskPublisher()
    fetch = build_processor(store, ScriptedFetcher(200), lambda: NOW, publisher=publisher)
    assert (await fetch.handle_push(push())).ack
    [(message, attributes)] = publisher.published
    assert attributes["lane"] == "processing"
    return PushedMessage("m2", message.encode(), attributes, "sub", None)


async def test_the_fetch_lane_hands_on_and_the_processing_lane_finishes() -> None:
    store = MemoryJobStore()
    handed = await _fetched(store)
    [item] = store.batches["j"]["b"].items
    assert item.status is TaskStatus.PROCESSING and item.attempts == 1
    assert "t" not in store.results["j"] and store.jobs["j"].status is not JobStatus.COMPLETED
    assert (await store.open_work(10)).processing == 1  # /v1/stats counts it as open work
    handoff = store.handed_off["j"]["t"]
    assert handoff.model_input == "# Hello\n\n[n](http://a.example/next)"  # the page's markdown
    assert handoff.outcome.data == {"h": "Hello"}  # the stages before the ai stage ran

    model = ScriptedModel(json.dumps({"greeting": "Hello"}))
    assert (await processing(store, model).handle_push(handed)).ack
    result = store.results["j"]["t"]
    assert result.status is TaskStatus.SUCCEEDED and result.attempts == 1
    assert result.data == {"heading": "Hello", "said": {"greeting": "Hello"}}  # later stages ran
    assert result.http_status == 200 and result.fetched_at == NOW
    assert store.jobs["j"].status is JobStatus.COMPLETED
    [call] = model.calls
    assert [m.role for m in call.messages] == ["system", "user"]
    assert call.messages[1].content == handoff.model_input and call.schema == SCHEMA
    assert store.handed_off["j"] == {}
    assert store.tallies["j"].usage == ModelUsage(calls=1, input_tokens=10, output_tokens=3)

    # a redelivery of the processing message finds nothing to do: the model is not asked again
    assert (await processing(store, model).handle_push(handed)).ack and len(model.calls) == 1


async def test_the_processing_lane_announces_the_pages_it_ends_again_on_a_redelivery() -> None:
    store, outbox = MemoryJobStore(), MemoryWebhookOutbox()
    await setup_job(
        store, {**body(), "webhook": {"url": "http://h.example/", "events": ["task.finished"]}}
    )
    publisher = MemoryTaskPublisher()
    events = JobEvents(store, outbox)
    fetch = build_processor(
        store, ScriptedFetcher(200), lambda: NOW, publisher=publisher, events=events
    )
    assert (await fetch.handle_push(push())).ack
    assert outbox.events == []  # handed on, not ended
    [(message, attributes)] = publisher.published
    handed = PushedMessage("m2", message.encode(), attributes, "sub", None)
    lane = processing(store, ScriptedModel(json.dumps({"greeting": "Hi"})), events=events)
    assert (await lane.handle_push(handed)).ack
    assert [e.data["task_id"] for e in outbox.events] == ["t"]
    assert (await lane.handle_push(handed)).ack  # finished: announced again, the same event
    assert [e.id for e in outbox.events] == [outbox.events[0].id] * 2


async def test_a_busy_model_spends_no_attempt_and_the_redelivery_answers() -> None:
    store = MemoryJobStore()
    handed = await _fetched(store, input="text", max_input_chars=3)
    model = ScriptedModel(ModelBusy("429", 1), ModelBusy("429", 1), json.dumps({"greeting": "x"}))
    lane = processing(store, model)
    assert not (await lane.handle_push(handed)).ack  # nacked: Pub/Sub backs off
    [item] = store.batches["j"]["b"].items
    assert item.status is TaskStatus.PROCESSING and item.attempts == 1
    assert item.error is not None and item.error.startswith("ai_busy")
    assert (await lane.handle_push(handed)).ack
    result = store.results["j"]["t"]
    assert result.status is TaskStatus.SUCCEEDED and "$ai_input" in result.truncated_fields
    assert model.calls[-1].messages[1].content == "Hel"  # the visible text, cut at 3


async def test_an_answer_that_stays_invalid_fails_keeping_the_data_that_went_in() -> None:
    store = MemoryJobStore()
    handed = await _fetched(store)
    model = ScriptedModel('{"greeting": 3}')
    assert (await processing(store, model).handle_push(handed)).ack
    result = store.results["j"]["t"]
    assert result.status is TaskStatus.FAILED and result.data == {"h": "Hello"}
    assert result.error is not None and result.error.startswith("ai_invalid_output")
    assert len(model.calls) == 2  # the answer and one repair


async def test_an_answer_is_paid_for_once_unless_the_stage_opts_out() -> None:
    cache, model = MemoryAnswerCache(), ScriptedModel(json.dumps({"greeting": "Hello"}))
    for _ in range(2):  # the same page and question: a second job, or a redelivery
        store = MemoryJobStore()
        handed = await _fetched(store)
        assert (await processing(store, model, cache).handle_push(handed)).ack
        assert store.results["j"]["t"].data == {"heading": "Hello", "said": {"greeting": "Hello"}}
    assert len(model.calls) == 1
    assert store.tallies["j"].usage == ModelUsage(cached=1)  # the second job paid nothing

    store = MemoryJobStore()
    handed = await _fetched(store, cache=False)
    assert (await processing(store, model, cache).handle_push(handed)).ack
    assert len(model.calls) == 2


class CountingStore(MemoryJobStore):
    """The memory store, recording how many handoffs each read asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.read: list[int] = []

    async def handoffs(self, job_id: str, task_ids: Sequence[str]) -> dict[str, Handoff]:
        self.read.append(len(task_ids))
        return await super().handoffs(job_id, task_ids)


class CountingCache(MemoryAnswerCache):
    """The memory cache, recording how many answers each read asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.read: list[int] = []

    async def get_many(self, keys: Sequence[str], now: datetime) -> dict[str, CachedAnswer]:
        self.read.append(len(keys))
        return await super().get_many(keys, now)


async def test_a_delivery_reads_its_tasks_a_lane_width_at_a_time() -> None:
    store, cache = CountingStore(), CountingCache()
    handed = await _fetched(store, urls=5)  # every page the same markdown: one answer for all
    model = ScriptedModel(json.dumps({"greeting": "Hello"}))
    assert (await processing(store, model, cache).handle_push(handed)).ack  # 2 model slots
    assert store.read == [2, 2, 1] and cache.read == [2, 2, 1]  # not 5 handoffs at once
    assert {r.status for r in store.results["j"].values()} == {TaskStatus.SUCCEEDED}
    assert len(model.calls) == 2  # the first two asked; the later reads found their answer
    assert store.tallies["j"].usage == ModelUsage(
        calls=2, cached=3, input_tokens=20, output_tokens=6
    )


async def test_a_delivery_that_finds_the_model_busy_reads_no_further() -> None:
    store = CountingStore()
    handed = await _fetched(store, urls=9)
    assert not (await processing(store, ScriptedModel(ModelBusy("429", 1))).handle_push(handed)).ack
    assert store.read == [2]  # the redelivery reads the rest
    assert {i.status for i in store.batches["j"]["b"].items} == {TaskStatus.PROCESSING}


class CountingGate(MemoryHostGate):
    """The memory gate, counting the acquisitions asked of it and those refused."""

    asked = refused = 0
    wait_s: float | None = None  # what a refusal says to wait (None: the memory gate's)

    async def acquire(self, *args: Any, **kwargs: Any) -> Any:
        self.asked += 1
        got = await super().acquire(*args, **kwargs)
        if isinstance(got, Permit):
            return got
        self.refused += 1
        return got if self.wait_s is None else Throttle(self.wait_s, got.reason)


async def test_tasks_queue_in_the_process_and_only_as_many_as_the_cap_ask_the_gate() -> None:
    gate = CountingGate()
    slots = ModelSlots(gate, "fake", 2, lambda: NOW, call_timeout_s=10)
    in_flight = most = 0

    async def task() -> None:
        nonlocal in_flight, most
        async with slots.held(until=time.monotonic() + 30):
            in_flight += 1
            most = max(most, in_flight)
            await asyncio.sleep(0.05)
            in_flight -= 1

    await asyncio.gather(*(task() for _ in range(40)))

    assert most == 2
    assert gate.asked == 40  # each task asked once: the waiting was done in the process


async def test_a_task_that_waits_past_its_time_for_a_turn_finds_the_model_busy() -> None:
    slots = ModelSlots(MemoryHostGate(), "fake", 1, lambda: NOW, call_timeout_s=10)
    async with slots.held(until=time.monotonic() + 5):
        with pytest.raises(ModelBusy):
            async with slots.held(until=time.monotonic() + 0.05):
                pass


async def test_while_the_gate_is_full_one_task_of_a_process_asks_it() -> None:
    gate = CountingGate()
    other, here = (ModelSlots(gate, "fake", 4, lambda: NOW, call_timeout_s=10) for _ in "ab")
    full, held = asyncio.Event(), 0

    async def elsewhere() -> None:  # another process takes every slot for a while
        nonlocal held
        async with other.held(until=time.monotonic() + 5):
            held += 1
            if held == 4:
                full.set()
            await asyncio.sleep(1.2)

    async def task() -> None:
        await full.wait()
        async with here.held(until=time.monotonic() + 30):
            await asyncio.sleep(0.01)

    await asyncio.gather(*[elsewhere() for _ in range(4)], *(task() for _ in range(12)))

    # refused every 0.2 s (the memory gate's wait) for 1.2 s: one asker; four would be ~24
    assert gate.refused <= 8


async def test_a_slot_given_back_in_the_process_goes_to_its_asker_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(model_slots, "WAIT_STEP_S", 60.0)
    gate = CountingGate()
    gate.wait_s = 60.0  # a full gate is not looked at again for a minute
    other, here = (ModelSlots(gate, "fake", 2, lambda: NOW, call_timeout_s=10) for _ in "ab")
    order: list[str] = []

    async def first() -> None:
        async with here.held(until=time.monotonic() + 5):
            await asyncio.sleep(0.1)
        order.append("first done")

    async def second() -> None:
        await asyncio.sleep(0.02)  # the gate is full now: this one waits
        async with here.held(until=time.monotonic() + 90):
            order.append("second held")

    async with other.held(until=time.monotonic() + 5):  # another process holds the other slot
        async with asyncio.timeout(5):  # not the 60 s until the gate's next look
            await asyncio.gather(first(), second())

    assert order == ["first done", "second held"] and gate.refused == 1


COSTLY_SCHEMA = {
    "type": "object",
    "properties": {f"p{n}": {"type": "string", "pattern": "(?s).{951,1000}y"} for n in range(5)},
}


async def test_an_answer_whose_check_passes_the_budget_fails_at_once() -> None:
    """The schema's patterns are the caller's: ~11 µs a character on RE2's slower engine, five
    of them over 100,000 characters each; checked in a process of its own within the
    budget, the task fails extraction_timeout naming it, and the model is not asked again."""
    store = MemoryJobStore()
    handed = await _fetched(store, schema=COSTLY_SCHEMA)
    model = ScriptedModel(json.dumps({f"p{n}": "a" * 100_000 for n in range(5)}))
    work = BudgetedProcesses(1)
    budget = Budget("answer's check and later stages", "SCRAPEJOBS_EXTRACTION_BUDGET_S", 1.0)
    try:
        lane = processing(store, model, stages=StageWork(work, budget))
        assert (await lane.handle_push(handed)).ack
    finally:
        await work.close()
    result = store.results["j"]["t"]
    assert result.status is TaskStatus.FAILED and len(model.calls) == 1
    assert result.error == (
        "extraction_timeout: the answer's check and later stages used more than 1 s of CPU "
        "(SCRAPEJOBS_EXTRACTION_BUDGET_S)"
    )
