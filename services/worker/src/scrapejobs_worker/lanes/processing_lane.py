"""The processing lane: a batch's ``processing`` tasks (fetched and extracted by the fetch lane,
which handed them on with the model's input) get their ``ai`` stage and the stages after it.
The page is never fetched again for the model's sake.

A delivery claims the batch for this lane (a lease, no attempt counted), reads the handoffs,
and runs each task under a model slot (model_slots.py): the answer, checked against the
stage's schema, goes into ``data[into]``; the later stages run; the task finishes. Answers are
kept for ``ANSWER_TTL`` by content, prompt, schema and model (unless the stage says
``"cache": false``): the same page asked again, or a message redelivered after its worker died
past the model's answer, does not ask (nor pay) the model again. Its
changes are written as the fetch lane's are (batch_recorder.py). What the delivery answers:

* every task finished → ack;
* the model was busy (429, 5xx, no slot free in time) → the task stays ``processing``, no
  attempt spent, nack: Pub/Sub backs off and redelivers (after max delivery attempts its
  dead letters end the lane's tasks ``dead_lettered``);
* an answer that fails the schema after one repair → ``failed``, error ``ai_invalid_output``,
  the data that went in kept; a refused request → ``failed``, error ``ai_refused``.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import timedelta
from typing import Any, NamedTuple

from opentelemetry.metrics import NoOpMeter

from scrapejobs_shared.delivery.completion import complete_if_done
from scrapejobs_shared.delivery.job_events import JobEvents
from scrapejobs_shared.domain.batch_transitions import FinishTask, ReleaseTask
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.model_usage import ModelUsage
from scrapejobs_shared.domain.records import BatchItem, Handoff, TaskOutcome
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.extraction import fit_result
from scrapejobs_shared.messaging.task_message import BatchMessage, PushedMessage
from scrapejobs_shared.pipeline import PipelineFailure
from scrapejobs_shared.pipeline.spec import AiOptions, Stage, ai_stage_index
from scrapejobs_shared.ports.answer_cache import AnswerCache, CachedAnswer, answer_key
from scrapejobs_shared.ports.batch_store import BatchClaim
from scrapejobs_shared.ports.dependency_unavailable import DependencyUnavailable
from scrapejobs_shared.ports.job_store import AlreadyDone, Busy, Claimed, LaneStore, Missing
from scrapejobs_worker.ai.ai_answers import AiAnswer, AiAnswers, AiInvalidOutput
from scrapejobs_worker.ai.model_port import ModelBusy, ModelRefused
from scrapejobs_worker.ai.model_slots import ModelSlots
from scrapejobs_worker.batches.batch_recorder import BatchRecorder
from scrapejobs_worker.batches.job_cache import JobCache
from scrapejobs_worker.delivery.delivery_metrics import DeliveryMetrics
from scrapejobs_worker.delivery.push_delivery import BatchPolicy, PushDelivery
from scrapejobs_worker.delivery.verdict import Verdict
from scrapejobs_worker.extraction.stage_work import StagesOverBudget
from scrapejobs_worker.tasks.task_runner import CANCELLED

log = logging.getLogger(__name__)
INPUT_CUT = "$ai_input"  # in truncated_fields: the model read the content cut short
ANSWER_TTL = timedelta(hours=24)


class ProcessingLane:
    def __init__(
        self,
        store: LaneStore,
        answers: AiAnswers | None,
        slots: ModelSlots | None,
        clock: Clock,
        policy: BatchPolicy,
        events: JobEvents | None = None,
        cache: AnswerCache | None = None,
        metrics: DeliveryMetrics | None = None,
    ) -> None:
        """``answers`` and ``slots`` None: no provider configured here (its tasks are nacked
        until one is: the dispatcher refuses ``ai`` stages then, so only a deployment that
        dropped its provider meets this)."""
        self._store = store
        self._cache = cache
        self._answers = answers
        self._slots = slots
        self._clock = clock
        self._policy = policy
        self._events = events
        self._jobs = JobCache(store, clock)
        self._lease = timedelta(seconds=policy.lease_s)
        metrics = metrics or DeliveryMetrics(NoOpMeter("scrapejobs-worker"), "processing")
        self._delivery = PushDelivery(store, clock, metrics, policy)

    async def handle_push(self, pushed: PushedMessage) -> Verdict:
        """A push's batches one after another (push_delivery.py: what every lane does)."""

        async def step(messages: tuple[BatchMessage, ...], deadline: float) -> list[Verdict]:
            return [await self._handle_batch(message, deadline) for message in messages]

        return await self._delivery.deliver(pushed, step)

    async def _handle_batch(self, message: BatchMessage, deadline: float) -> Verdict:
        spec = await self._jobs.spec(message.job_id)
        if spec is None:
            return Verdict.done("unknown job")
        now = self._clock()
        claim = await self._store.claim_batch(
            BatchClaim(message.job_id, message.batch_id, now, now + self._lease, lane="processing")
        )
        if isinstance(claim, Missing):
            return Verdict.done("unknown batch")
        if isinstance(claim, AlreadyDone):
            # announced again: the delivery that finished it may have died before it could
            pages = [(task.id, task.url) for task in message.tasks]
            if not await self._announce(message.job_id, spec, pages):
                return Verdict.retry("announcing finished pages failed", "republish_failed")
            return Verdict.done("already finished")
        if isinstance(claim, Busy):
            return Verdict.retry("batch is being processed by another delivery", "busy")
        return await self._run(claim, spec, deadline)

    async def _announce(self, job_id: str, spec: JobSpec, pages: list[tuple[str, str]]) -> bool:
        if self._events is None:
            return True
        return await self._events.pages_finished(job_id, spec, pages, self._clock())

    async def _run(self, claim: Claimed, spec: JobSpec, deadline: float) -> Verdict:
        recorder = BatchRecorder(
            self._store,
            claim.handle,
            self._clock,
            interval_s=self._policy.flush_interval_s,
            lease=self._lease,
            cancelled=claim.cancelled,
        )
        lanes = self._policy.concurrency if self._slots is None else self._slots.max_in_flight
        width = min(lanes, len(claim.batch.processing_items))
        key_of = self._key_of(spec)
        tasks = _Prefetched(self._store, self._cache, self._clock, claim, key_of, width)
        retry = False
        ended: set[str] = set()
        recorder.start()
        try:

            async def lane() -> None:
                nonlocal retry
                while not retry and (task := await tasks.next()) is not None:
                    change = await self._one(task, spec, recorder, deadline)
                    retry = retry or isinstance(change, ReleaseTask)  # a busy model: later
                    if (
                        isinstance(change, FinishTask)
                        and change.outcome.status is not TaskStatus.CANCELLED
                    ):
                        ended.add(change.task_id)
                    recorder.add(change)

            async with asyncio.TaskGroup() as group:
                for _ in range(tasks.width):
                    group.create_task(lane())
        finally:
            await recorder.close(keep_trying_until=deadline - self._policy.store_timeout_s)
        pages = [(item.task_id, item.url) for item in claim.batch.items if item.task_id in ended]
        announced = await self._announce(claim.batch.job_id, spec, pages)
        if recorder.job_may_be_done:
            await complete_if_done(
                self._store,
                claim.batch.job_id,
                self._clock,
                self._events,
                completed=recorder.job_completed,  # by the write of its last task
            )
        if not announced:
            return Verdict.retry("announcing finished pages failed", "republish_failed")
        if retry:
            return Verdict.retry("the model could not answer now", "ai_busy")
        return Verdict.done("processed")

    def _key_of(self, spec: JobSpec) -> Callable[[str], str | None]:
        """What the model's answer to a content is kept under; None: not kept."""
        index = ai_stage_index(spec.pipeline)
        options = spec.pipeline[index].options if index is not None else None
        if self._cache is None or self._answers is None or not isinstance(options, AiOptions):
            return lambda content: None
        if not options.cache:
            return lambda content: None
        model = self._answers.model_of(options)
        return lambda content: answer_key(content, options.prompt, options.json_schema, model)

    async def _one(
        self, task: _Task, spec: JobSpec, recorder: BatchRecorder, deadline: float
    ) -> FinishTask | ReleaseTask:
        item, handoff = task.item, task.handoff
        if recorder.cancelled:
            return FinishTask(item.task_id, CANCELLED)
        index = ai_stage_index(spec.pipeline)
        if handoff is None or index is None:  # cannot be, but never loops forever
            why = "processing_lost: the task's handoff or its ai stage is gone"
            return FinishTask(item.task_id, TaskOutcome(TaskStatus.FAILED, error=why))
        options = spec.pipeline[index].options
        assert isinstance(options, AiOptions)
        if self._answers is None or self._slots is None:
            return ReleaseTask(item.task_id, "ai_unavailable: no AI provider is configured here")
        went_in = dict(handoff.outcome.data or {})
        try:
            answer = await self._answer(options, handoff.model_input, task, deadline)
        except StagesOverBudget as exc:  # checking the answer: the same again next time
            return _failed(item, handoff, went_in, exc.error)
        except ModelBusy as exc:
            return ReleaseTask(item.task_id, f"ai_busy: {exc}")
        except DependencyUnavailable as exc:
            return ReleaseTask(item.task_id, f"dependency_unavailable: {exc}")
        except ModelRefused as exc:
            return _failed(item, handoff, went_in, f"ai_refused: {exc}")
        except AiInvalidOutput as exc:
            log.warning("model answer invalid", extra={"task_id": item.task_id, "why": str(exc)})
            return _failed(item, handoff, went_in, f"ai_invalid_output: {exc}", exc.usage)
        later = spec.pipeline[index + 1 :]
        return await self._settled(
            item, handoff, {**went_in, options.into: answer.value}, later, answer
        )

    async def _settled(
        self,
        item: BatchItem,
        handoff: Handoff,
        data: dict[str, Any],
        later: Sequence[Stage],
        answer: AiAnswer,
    ) -> FinishTask:
        """The task finished with the answer in ``data``, through the ``later`` stages."""
        assert self._answers is not None
        status, error, errors = TaskStatus.SUCCEEDED, None, dict(handoff.outcome.field_errors or {})
        try:
            data = await self._answers.stages.after(later, data)
        except PipelineFailure as failure:
            status, data, error = TaskStatus.FAILED, failure.data, failure.error
            errors.update(failure.problems)
        except StagesOverBudget as exc:
            status, error = TaskStatus.FAILED, exc.error
        fitted, truncated = fit_result(data)
        cut = (INPUT_CUT,) if answer.input_cut else ()
        outcome = replace(
            handoff.outcome,
            status=status,
            data=fitted,
            error=error,
            field_errors=errors or None,
            truncated_fields=(*handoff.outcome.truncated_fields, *truncated, *cut),
        )
        return FinishTask(item.task_id, outcome, usage=answer.usage)

    async def _answer(
        self,
        options: AiOptions,
        content: str,
        task: _Task,
        deadline: float,
    ) -> AiAnswer:
        """The kept answer, or the model's (under a slot), kept for next time."""
        assert self._answers is not None and self._slots is not None
        if (kept := task.kept) is not None:
            log.info("model answer reused", extra={"model": kept.model})
            cut = len(content) > options.max_input_chars
            return AiAnswer(kept.value, kept.model, ModelUsage(cached=1), cut)
        async with self._slots.held(until=deadline - self._policy.store_timeout_s):
            answer = await self._answers.answer(options, content)
        log.info(
            "model answered",
            extra={
                "model": answer.model,
                "calls": answer.usage.calls,
                "input_tokens": answer.usage.input_tokens,
                "output_tokens": answer.usage.output_tokens,
            },
        )
        if self._cache is not None and task.key is not None:
            kept = CachedAnswer(answer.value, answer.model)
            await self._cache.put(task.key, kept, self._clock() + ANSWER_TTL)
        return answer


class _Task(NamedTuple):
    item: BatchItem
    handoff: Handoff | None  # None: lost (cannot be, but never loops forever)
    key: str | None  # what the model's answer is kept under; None: not kept
    kept: CachedAnswer | None  # the answer kept from before


class _Prefetched:
    """A delivery's tasks with their handoffs and kept answers, read ``width`` tasks at a
    time as the lanes come to them: a delivery of 100 tasks, of which the model may answer
    only some before the ack deadline, neither reads 100 handoffs and answers at once (a
    burst the plain jobs beside it felt) nor reads those its redelivery will read again."""

    def __init__(
        self,
        store: LaneStore,
        cache: AnswerCache | None,
        clock: Clock,
        claim: Claimed,
        key_of: Callable[[str], str | None],
        width: int,
    ) -> None:
        self._store = store
        self._cache = cache
        self._clock = clock
        self._job_id = claim.batch.job_id
        self._pending = list(claim.batch.processing_items)
        self._key_of = key_of
        self._ready: deque[_Task] = deque()
        self._reading = asyncio.Lock()
        self.width = max(1, width)

    async def next(self) -> _Task | None:
        async with self._reading:
            if not self._ready and self._pending:
                await self._read(self._pending[: self.width])
                del self._pending[: self.width]
            return self._ready.popleft() if self._ready else None

    async def _read(self, items: list[BatchItem]) -> None:
        handoffs = await self._store.handoffs(self._job_id, [i.task_id for i in items])
        keys = {
            task_id: key
            for task_id, handoff in handoffs.items()
            if (key := self._key_of(handoff.model_input)) is not None
        }
        kept: dict[str, CachedAnswer] = {}
        if self._cache is not None and keys:
            kept = await self._cache.get_many(list(keys.values()), self._clock())
        for item in items:
            key = keys.get(item.task_id)
            found = kept.get(key) if key is not None else None
            self._ready.append(_Task(item, handoffs.get(item.task_id), key, found))


def _failed(
    item: BatchItem,
    handoff: Handoff,
    data: dict[str, Any],
    error: str,
    usage: ModelUsage | None = None,
) -> FinishTask:
    outcome = replace(handoff.outcome, status=TaskStatus.FAILED, data=data, error=error)
    return FinishTask(item.task_id, outcome, usage=usage)
