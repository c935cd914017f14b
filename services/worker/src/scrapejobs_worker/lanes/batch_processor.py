"""Processing one pushed batch: claim it, run its open tasks with bounded concurrency, record
their changes in batched commits, answer Pub/Sub within the ack deadline. Idempotent under
redelivery: a batch is claimed by one delivery at a time and finished tasks are skipped.

What the delivery answers:

* every task finished (or handed to the processing lane, which is then published) → ack;
* some task was deferred (throttled, host busy, out of time) → publish the batch again with
  one more deferral and ack (a fresh delivery count: waiting for a host never dead-letters);
* otherwise some task failed transiently → nack: Pub/Sub redelivers with backoff, and only
  the tasks still open run again.

A task that meets a dependency outage (Firestore or Pub/Sub did not answer within its
deadline) is released without spending an attempt, and the batch starts no other task: pages
whose results could not be recorded are not fetched. The results it holds are written before
the answer if the store comes back in time; the delivery is nacked.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta

from opentelemetry.trace import SpanKind, Tracer

from scrapejobs_shared.delivery.completion import complete_if_done
from scrapejobs_shared.delivery.enqueue import DEFERRALS, Enqueuer
from scrapejobs_shared.delivery.job_events import JobEvents
from scrapejobs_shared.domain.batch_transitions import FinishTask, ReleaseTask
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import BatchItem, BatchRecord
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.messaging.task_message import BatchMessage, PushedMessage
from scrapejobs_shared.observability.phase_timer import collect_phases, phase
from scrapejobs_shared.observability.store_ops import counting
from scrapejobs_shared.observability.tracing import extract_trace_context
from scrapejobs_shared.ports.batch_store import BatchClaim
from scrapejobs_shared.ports.dependency_unavailable import DependencyUnavailable
from scrapejobs_shared.ports.held_batches import HeldBatches
from scrapejobs_shared.ports.job_store import (
    AlreadyDone,
    Busy,
    Claimed,
    ClaimResult,
    LaneStore,
    Missing,
)
from scrapejobs_worker.batches.batch_recorder import BatchRecorder
from scrapejobs_worker.batches.batch_waits import BatchWaits
from scrapejobs_worker.batches.bundle_rendezvous import ClaimSeat, JointClaims, joint_claim
from scrapejobs_worker.batches.held_chain import HeldChain, NextRelease
from scrapejobs_worker.batches.host_spread import HostSpread
from scrapejobs_worker.batches.job_cache import JobCache
from scrapejobs_worker.batches.page_reuse import PageReuse
from scrapejobs_worker.batches.worker_heartbeat import WorkerHeartbeat
from scrapejobs_worker.delivery.delivery_metrics import DeliveryMetrics, subscription_name
from scrapejobs_worker.delivery.push_delivery import BatchPolicy, PushDelivery
from scrapejobs_worker.delivery.verdict import Verdict
from scrapejobs_worker.lanes.dead_letters import DeadLetters
from scrapejobs_worker.tasks.task_runner import BatchWork, Kind, TaskResult, TaskRunner, cancelled

log = logging.getLogger(__name__)
CANCELLED = TaskStatus.CANCELLED


@dataclass(frozen=True, slots=True)
class Companions:
    """What a worker process adds to a batch's run, each optional: the jobs' events (webhooks),
    its heartbeat, the page cache's reuse, held batches (a job's window, slow paces)."""

    events: JobEvents | None = None
    heartbeat: WorkerHeartbeat | None = None
    reuse: PageReuse | None = None
    held: HeldBatches | None = None


class BatchProcessor:
    def __init__(
        self,
        store: LaneStore,
        runner: TaskRunner,
        enqueuer: Enqueuer,
        clock: Clock,
        tracer: Tracer,
        metrics: DeliveryMetrics,
        policy: BatchPolicy,
        companions: Companions = Companions(),
    ) -> None:
        events, held = companions.events, companions.held
        self._chain = HeldChain(held, enqueuer, clock)
        self._waits = BatchWaits(held, enqueuer, clock)
        self._dead_letters = DeadLetters(
            store, enqueuer, self._chain, clock, metrics, policy.max_delivery_attempts, events
        )
        self._heartbeat = companions.heartbeat or WorkerHeartbeat(None, clock, "local")
        self._reuse = companions.reuse or PageReuse(None, store, clock)
        self._events = events
        self._store = store
        self._runner = runner
        self._enqueuer = enqueuer
        self._clock = clock
        self._tracer = tracer
        self._metrics = metrics
        self._policy = policy
        self._jobs = JobCache(store, clock)
        self._lease = timedelta(seconds=policy.lease_s)
        self._joint = JointClaims(store, clock, self._lease)
        self._delivery = PushDelivery(store, clock, metrics, policy)

    async def close(self) -> None:
        """Stopping: what waits on this process is published now (batch_waits.py)."""
        await self._waits.close()

    async def handle_push(self, pushed: PushedMessage) -> Verdict:
        """One batch, or a bundle of several jobs' batches run side by side (push_delivery.py:
        what every lane does with a push)."""

        async def step(
            messages: tuple[BatchMessage, ...], deadline: float
        ) -> list[Verdict | BaseException]:
            return await asyncio.gather(
                *(
                    self._handle_batch(pushed, message, deadline, seat)
                    for message, seat in zip(messages, self._joint.seats(messages), strict=True)
                ),
                return_exceptions=True,
            )

        return await self._delivery.deliver(pushed, step)

    async def _handle_batch(
        self,
        pushed: PushedMessage,
        message: BatchMessage,
        deadline: float,
        seat: ClaimSeat | None = None,
    ) -> Verdict:
        started = time.perf_counter()
        attributes: dict[str, str | int] = {
            "job.id": message.job_id,
            "batch.id": message.batch_id,
            "messaging.system": "gcp_pubsub",
            "messaging.operation.name": "process",
            "messaging.message.id": pushed.message_id,
            "messaging.batch.message_count": len(message.tasks),
        }
        context = extract_trace_context(pushed.attributes)
        with (
            counting() as ops,
            collect_phases() as phases,
            self._tracer.start_as_current_span(
                "process_batch", context, kind=SpanKind.CONSUMER, attributes=attributes
            ),
        ):
            try:
                verdict, results = await self._process(message, _deferrals(pushed), deadline, seat)
            finally:
                if seat is not None:  # nobody waits for a batch that will not come
                    seat.leave()
        self._metrics.tasks(pushed.subscription, results)
        tally = dict(Counter(result.outcome for result in results))  # succeeded: 48, retry: 2...
        log.info(
            "batch processed",
            extra={
                "job_id": message.job_id,
                "batch_id": message.batch_id,
                "subscription": subscription_name(pushed.subscription, "unknown"),
                "tasks": len(message.tasks),
                **tally,
                "verdict": verdict.reason,
                "duration_ms": round((time.perf_counter() - started) * 1000, 1),
                "firestore_reads": ops.reads,
                "firestore_writes": ops.writes,
                **phases,
            },
        )
        return verdict

    async def handle_dead_letter(self, pushed: PushedMessage) -> Verdict:
        """Pub/Sub gave up on the batch (or each batch of a bundle): ``dead_letters.py``."""
        messages = await self._delivery.batches_of(pushed)
        if messages is None:
            return Verdict.done("malformed dead letter recorded")
        return await self._dead_letters.handle(pushed, messages)

    async def reject_envelope(self, body: bytes, reason: str) -> None:
        log.error("malformed push envelope", extra={"why": reason})
        await self._store.record_rejected_message("", reason, body, self._clock())

    async def _process(
        self, message: BatchMessage, deferrals: int, deadline: float, seat: ClaimSeat | None
    ) -> tuple[Verdict, list[TaskResult]]:
        # The job's spec (a read on a job's first batch in this process) and the claim run
        # together: a one-URL job waits for one round trip, not two. A spec read that fails
        # after the claim succeeded leaves the claim's lease to lapse (the redelivery waits it out).
        (spec, kept), claim = await asyncio.gather(
            self._spec_and_kept(message),
            self._claim(message, deadline, seat),
        )
        if spec is None:
            log.warning("job not found", extra={"job_id": message.job_id})
            return Verdict.done("unknown job"), []
        if not isinstance(claim, Claimed):
            return await self._not_claimed(message, spec, claim), []
        recorder = BatchRecorder(
            self._store,
            claim.handle,
            self._clock,
            interval_s=self._policy.flush_interval_s,
            lease=self._lease,
            cancelled=claim.cancelled,
            heartbeat=self._heartbeat,
        )
        open_ids = {item.task_id for item in claim.batch.fetch_items}
        reused = [] if claim.cancelled else [r for r in kept if r.change.task_id in open_ids]
        work = BatchWork(
            _without(claim.batch, reused), spec, deferrals, deadline, lambda: recorder.cancelled
        )
        release = self._chain.next_release(claim.batch, deferrals, crawl=spec.crawl is not None)
        kept_under = self._reuse.key_of(spec, claim.batch.tenant)
        results = await self._run_all(work, recorder, reused, kept_under, release)
        kinds = {result.kind for result in results}
        announced = await self._announce(message.job_id, spec, finished_pages(claim.batch, results))
        if recorder.job_may_be_done:
            # A coalesced job (its spec carried) has this one batch: when every task of the
            # claim finished, the job has no open task left, and its counts need no read.
            closed = (
                message.spec is not None
                and not _still_open(claim.batch.open_items, results)
                and Kind.HANDED_OFF not in kinds
            )
            await complete_if_done(
                self._store,
                message.job_id,
                self._clock,
                self._events,
                spec=spec,
                no_open_tasks=closed,
                completed=recorder.job_completed,  # by the write of its last task
            )
        return await self._verdict(claim.batch, results, deferrals, announced), results

    async def _not_claimed(
        self, message: BatchMessage, spec: JobSpec, claim: Busy | AlreadyDone | Missing
    ) -> Verdict:
        if isinstance(claim, Missing):
            log.warning("batch not found", extra={"batch_id": message.batch_id})
            return Verdict.done("unknown batch")
        if isinstance(claim, Busy):
            return Verdict.retry("batch is being processed by another delivery", "busy")
        # announced again: the delivery that finished it may have died before it could
        pages = [(task.id, task.url) for task in message.tasks]
        if not await self._announce(message.job_id, spec, pages):
            return Verdict.retry("announcing finished pages failed", "republish_failed")
        return Verdict.done("already finished")

    async def _verdict(
        self, batch: BatchRecord, results: list[TaskResult], deferrals: int, announced: bool
    ) -> Verdict:
        """What the delivery answers once its tasks ran: their hand-ons and announcements
        made, a deferral published again, a transient failure redelivered."""
        kinds = {result.kind for result in results}
        # also after a cancel: the processing lane ends those tasks cancelled
        if not await self._enqueuer.hand_on(_handed_on(batch, results)):
            return Verdict.retry(
                "handing tasks on to the processing lane failed", "republish_failed"
            )
        if not announced:  # a batch all finished announces them again on its redelivery
            return Verdict.retry("announcing finished pages failed", "republish_failed")
        if Kind.DEFER in kinds:
            deferred = replace(batch, items=_still_open(batch.fetch_items, results))
            wait_s = min(result.wait_s for result in results if result.kind is Kind.DEFER)
            if not await self._waits.defer(deferred, deferrals + 1, wait_s):
                reason = "deferred, but publishing the batch again failed"
                return Verdict.retry(reason, "republish_failed")
            return Verdict.done("deferred")
        if Kind.RETRY in kinds:
            return Verdict.retry("some tasks failed transiently", "transient_task_failure")
        return Verdict.done("done")

    async def _announce(self, job_id: str, spec: JobSpec, pages: list[tuple[str, str]]) -> bool:
        if self._events is None:
            return True
        return await self._events.pages_finished(job_id, spec, pages, self._clock())

    async def _spec_and_kept(
        self, message: BatchMessage
    ) -> tuple[JobSpec | None, list[TaskResult]]:
        """The job's spec and the results of the message's tasks the page cache keeps (read
        beside the claim: the claim then says which of them are still open)."""
        spec = await self._spec(message)
        if spec is None:
            return None, []
        tasks = [(task.id, task.url) for task in message.tasks]
        return spec, await self._reuse.reused(message.job_id, spec, tasks, message.tenant)

    async def _spec(self, message: BatchMessage) -> JobSpec | None:
        """The spec the message carries (coalesced small jobs), else the job's as read once
        per job and process."""
        if message.spec is not None:
            return message.spec
        with phase("spec"):
            return await self._jobs.spec(message.job_id)

    async def _claim(
        self, message: BatchMessage, deadline: float, seat: ClaimSeat | None
    ) -> ClaimResult:
        """Claim the batch (first with its bundle's, given a ``seat``); a duplicate delivery
        waits out the owner's lease (its writes renew it while it runs) rather than nacking,
        which would spend a delivery attempt."""
        while True:
            now = self._clock()
            with phase("claim"):
                claim = await seat.ask(joint_claim(message)) if seat is not None else None
                if claim is None:  # alone, or no longer the first try
                    claim = await self._store.claim_batch(
                        BatchClaim(
                            message.job_id,
                            message.batch_id,
                            now,
                            now + self._lease,
                            mark_started=message.spec is not None,  # no job read marks it running
                            claim_token=message.claim_token,
                        ),
                    )
            if not isinstance(claim, Busy):
                return claim
            wait_s = min((claim.until - now).total_seconds(), 1.0) + 0.05
            if time.monotonic() + wait_s > deadline - self._policy.deadline_margin_s:
                return claim
            await asyncio.sleep(max(wait_s, 0.05))

    async def _run_safely(
        self, item: BatchItem, work: BatchWork, outages: list[DependencyUnavailable]
    ) -> TaskResult:
        """A task whose run fails unexpectedly (a bug, a store error no adapter absorbs) is
        retried like a transient failure, its traceback logged; the batch's other tasks carry
        on and their results are recorded. A task that meets an outage is released without
        spending an attempt, and the outage noted in ``outages`` (the lanes stop). The page
        counts as in flight meanwhile."""
        self._heartbeat.pages_in_flight += 1
        try:
            return await self._runner.run(item, work)
        except DependencyUnavailable as exc:
            outages.append(exc)
            log.warning("task met an outage", extra={"task_id": item.task_id, "why": str(exc)})
            release = ReleaseTask(item.task_id, f"dependency_unavailable: {exc}", True)
            return TaskResult(release, Kind.RETRY, "retry")
        except Exception as exc:
            log.exception("task failed unexpectedly", extra={"task_id": item.task_id})
            error = f"internal_error: {type(exc).__name__}"
            return TaskResult(ReleaseTask(item.task_id, error), Kind.RETRY, "retry")
        finally:
            self._heartbeat.pages_in_flight -= 1

    async def _run_all(
        self,
        work: BatchWork,
        recorder: BatchRecorder,
        reused: list[TaskResult],
        key_of: Callable[[str], str] | None,
        release: NextRelease,
    ) -> list[TaskResult]:
        """Run the batch's tasks (those ``reused`` are recorded as they are); a page that
        succeeds is indexed in the page cache under ``key_of(url)`` when the job keeps pages.
        Once its last task has started (at once when it has none to fetch), ``release`` (the
        job's next held batch of the host, if this run moves its window on) starts."""
        queue = HostSpread(work.batch.fetch_items, self._policy.concurrency)
        results: list[TaskResult] = list(reused)
        outages: list[DependencyUnavailable] = []

        async def lane() -> None:
            await run_lane()
            if not outages:
                release.start()  # this batch's last task has started

        async def run_lane() -> None:
            while not outages and (item := queue.next()) is not None:
                started = time.perf_counter()
                result = (
                    cancelled(item)
                    if recorder.cancelled
                    else await self._run_safely(item, work, outages)
                )
                change = result.change
                if isinstance(change, FinishTask) and change.outcome.status is not CANCELLED:
                    service_ms = round((time.perf_counter() - started) * 1000)
                    # a page whose certificate failed is never served to another job
                    keeps = key_of is not None and not change.outcome.tls_unverified
                    kept = key_of(item.url) if keeps and key_of is not None else None
                    change = FinishTask(change.task_id, change.outcome, service_ms, kept_under=kept)
                    result = TaskResult(change, result.kind, result.outcome)
                queue.done(item)
                recorder.add(result.change)
                results.append(result)

        recorder.start()
        for result in reused:
            recorder.add(result.change)
        self._heartbeat.batches_in_flight += 1
        if not queue.lanes:
            release.start()  # nothing to fetch (every page reused): the next one goes at once
        try:
            async with asyncio.TaskGroup() as lanes:
                for _ in range(queue.lanes):
                    lanes.create_task(lane())
        finally:
            await self._end(work, recorder, release, results)
        return results

    async def _end(
        self,
        work: BatchWork,
        recorder: BatchRecorder,
        release: NextRelease,
        results: list[TaskResult],
    ) -> None:
        """The run's last write, then its window's refill; out of flight either way (a batch
        whose last write failed is delivered again, not run here, and has not ended)."""
        try:
            await release.done()
            with phase("record"), self._tracer.start_as_current_span("store"):
                # during an outage its last write is tried again while an answer can still
                # follow a call that does not answer
                await recorder.close(
                    keep_trying_until=work.deadline - self._policy.store_timeout_s,
                    rested=any(result.kind is Kind.DEFER for result in results),
                )
            await release.ended()
            self._heartbeat.finished(batches=1)
        finally:
            self._heartbeat.batches_in_flight -= 1


def finished_pages(batch: BatchRecord, results: list[TaskResult]) -> list[tuple[str, str]]:
    """(task id, URL) of the pages ``results`` ended, but those cancelled."""
    ended = {
        result.change.task_id
        for result in results
        if isinstance(result.change, FinishTask)
        and result.change.outcome.status.terminal
        and result.change.outcome.status is not CANCELLED
    }
    return [(item.task_id, item.url) for item in batch.items if item.task_id in ended]


def _without(batch: BatchRecord, reused: list[TaskResult]) -> BatchRecord:
    """``batch`` without the tasks whose pages were reused."""
    if not reused:
        return batch
    done = {result.change.task_id for result in reused}
    return replace(batch, items=tuple(item for item in batch.items if item.task_id not in done))


def _still_open(items: tuple[BatchItem, ...], results: list[TaskResult]) -> tuple[BatchItem, ...]:
    """The tasks of ``items`` this delivery did not finish or hand on."""
    done = {r.change.task_id for r in results if r.kind in (Kind.FINISHED, Kind.HANDED_OFF)}
    return tuple(item for item in items if item.task_id not in done)


def _handed_on(batch: BatchRecord, results: list[TaskResult]) -> BatchRecord:
    """The batch as the processing lane finds it after this delivery: the tasks it handed on
    and those an earlier delivery handed on."""
    handed = {r.change.task_id for r in results if r.kind is Kind.HANDED_OFF}
    if not handed:  # the common case: no ai stage, nothing copied
        return batch
    items = tuple(
        replace(item, status=TaskStatus.PROCESSING) if item.task_id in handed else item
        for item in batch.items
    )
    return replace(batch, items=items)


def _deferrals(pushed: PushedMessage) -> int:
    value = pushed.attributes.get(DEFERRALS, "0")
    return int(value) if value.isdigit() else 0
