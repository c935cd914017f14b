"""The one enqueue path: batches become messages, are published, and a batch whose message
could not be published is failed (``publish_failed``) rather than left to wait forever.
Submission, crawl expansion, deferral and recovery all publish through it.

A publish that meets an outage (Pub/Sub did not answer within its deadline) fails nothing:
``DependencyUnavailable`` is raised and the batches stay queued for whoever recovers them (a
submission's job stays ``publishing``; a crawl's parent task is retried; reconcile finds the
rest), since the tasks did nothing wrong."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from opentelemetry.trace import SpanKind, Tracer

from scrapejobs_shared.delivery.completion import complete_if_done
from scrapejobs_shared.delivery.job_events import JobEvents
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.lanes import PROCESSING_LANE
from scrapejobs_shared.domain.records import BatchRecord, TaskOutcome
from scrapejobs_shared.domain.statuses import FETCH_STATUSES, TaskStatus
from scrapejobs_shared.messaging.task_message import (
    MAX_BUNDLE,
    BatchMessage,
    BundleMessage,
    TaskMessage,
    TaskRef,
)
from scrapejobs_shared.messaging.topology import LANE_ATTRIBUTE
from scrapejobs_shared.observability.tracing import inject_trace_context
from scrapejobs_shared.ports.batch_store import BatchStore, Settled
from scrapejobs_shared.ports.dependency_unavailable import DependencyUnavailable
from scrapejobs_shared.ports.jobs import Jobs
from scrapejobs_shared.ports.task_publisher import TaskPublisher

log = logging.getLogger(__name__)

DEFERRALS = "deferrals"  # message attribute: how often the batch was deferred for politeness
REVIVALS = "revivals"  # message attribute: how often the batch came back from dead letters
PUBLISH_FAILED = TaskOutcome(TaskStatus.FAILED, error="publish_failed: could not enqueue")


class StoreForEnqueue(Jobs, BatchStore, Protocol):
    """What enqueueing needs of the store: batches to close, jobs to complete."""


def lane_of(batch: BatchRecord) -> str:
    """The lane of a batch's next message: its own while it has tasks to fetch (the fetch
    lane hands on the rest when it is done), the processing lane once every open task of it
    waits for that lane."""
    if batch.fetch_items or not batch.processing_items:
        return batch.lane
    return PROCESSING_LANE


def message_of(
    batch: BatchRecord, spec: JobSpec | None = None, claim_token: str | None = None
) -> BatchMessage:
    """The message of a batch: the open tasks of its lane (finished ones need no delivery)."""
    items = batch.processing_items if lane_of(batch) == PROCESSING_LANE else batch.fetch_items
    refs = tuple(TaskRef(id=item.task_id, url=item.url) for item in items)
    return BatchMessage(
        job_id=batch.job_id,
        batch_id=batch.id,
        tasks=refs,
        spec=spec,
        claim_token=claim_token,
        tenant=batch.tenant,
    )


@dataclass(eq=False)
class Enqueuer:
    store: StoreForEnqueue
    publisher: TaskPublisher
    clock: Clock
    tracer: Tracer
    events: JobEvents | None = None

    async def publish(self, batches: Sequence[BatchRecord], deferrals: int = 0) -> int:
        """Publish one message per batch with open tasks; returns how many tasks were failed
        because their message could not be published."""
        batches = [batch for batch in batches if batch.open_items]
        if not batches:
            return 0
        lost: list[BatchRecord] = []
        for lane in sorted({lane_of(batch) for batch in batches}):
            in_lane = [batch for batch in batches if lane_of(batch) == lane]
            results = await self._send([message_of(b) for b in in_lane], deferrals, lane)
            lost += [
                b for b, r in zip(in_lane, results, strict=True) if isinstance(r, BaseException)
            ]
        return sum((await self._fail_lost(lost)).values())

    async def publish_bundled(
        self,
        batches: Sequence[BatchRecord],
        specs: Mapping[str, JobSpec],
        claim_tokens: Mapping[str, str] | None = None,
    ) -> dict[str, int]:
        """Publish the batches of several jobs (coalesced submissions) as bundle messages, one
        per lane (of at most ``MAX_BUNDLE`` batches), each batch carrying its job's spec (and
        claim token, by job id). Returns, per job id, how many tasks were failed because their
        bundle could not be published."""
        tokens = claim_tokens or {}
        batches = [batch for batch in batches if batch.open_items]
        lost: list[BatchRecord] = []
        for lane in sorted({batch.lane for batch in batches}):
            in_lane = [batch for batch in batches if batch.lane == lane]
            bundles = [in_lane[n : n + MAX_BUNDLE] for n in range(0, len(in_lane), MAX_BUNDLE)]
            messages: list[TaskMessage] = [
                BundleMessage(
                    batches=tuple(
                        message_of(b, specs.get(b.job_id), tokens.get(b.job_id)) for b in bundle
                    )
                )
                for bundle in bundles
            ]
            results = await self._send(messages, 0, lane)
            for bundle, result in zip(bundles, results, strict=True):
                if isinstance(result, BaseException):
                    lost += bundle
        return await self._fail_lost(lost)

    async def _fail_lost(self, lost: Sequence[BatchRecord]) -> dict[str, int]:
        """Fail the open tasks of batches whose message could not be published (those of the
        message's lane); per job, how many tasks that failed."""
        failed: dict[str, int] = {}
        for batch in lost:
            statuses = (
                {TaskStatus.PROCESSING} if lane_of(batch) == PROCESSING_LANE else FETCH_STATUSES
            )
            closed = await self.store.close_batch(
                batch.job_id, batch.id, PUBLISH_FAILED, self.clock(), statuses
            )
            if isinstance(closed, Settled):
                failed[batch.job_id] = failed.get(batch.job_id, 0) + len(closed.finished)
        for job_id in dict.fromkeys(batch.job_id for batch in lost):
            log.error(
                "batches not published",
                extra={
                    "job_id": job_id,
                    "batches": sum(batch.job_id == job_id for batch in lost),
                    "tasks": failed.get(job_id, 0),
                },
            )
            await complete_if_done(self.store, job_id, self.clock, self.events)
        return failed

    async def hand_on(self, batch: BatchRecord) -> bool:
        """Publish the batch's ``processing`` tasks to the processing lane (the fetch lane is
        done with them): False if it could not be published, in which case the caller nacks
        its delivery, whose next run hands them on again."""
        items = batch.processing_items
        if not items:
            return True
        refs = tuple(TaskRef(id=item.task_id, url=item.url) for item in items)
        message = BatchMessage(job_id=batch.job_id, batch_id=batch.id, tasks=refs)
        return await self._published(message, PROCESSING_LANE)

    async def republish(self, batch: BatchRecord, deferrals: int) -> bool:
        """Publish a batch again (a deferral): False if it could not be published, in which
        case the caller nacks its delivery so that Pub/Sub tries again."""
        if not batch.fetch_items:
            return True
        return await self._published(message_of(batch), batch.lane, deferrals)

    async def revive(self, message: BatchMessage, lane: str, revivals: int) -> bool:
        """Publish a dead-lettered batch again, as its ``revivals``-th return (the broker gave
        up delivering it, not its tasks their attempts): False if it could not be published."""
        return await self._published(message, lane, carry={REVIVALS: str(revivals)})

    async def _published(
        self,
        message: BatchMessage,
        lane: str,
        deferrals: int = 0,
        carry: Mapping[str, str] | None = None,
    ) -> bool:
        """Whether one message was published (an outage or a failed publish: False)."""
        try:
            [result] = await self._send([message], deferrals, lane, carry)
        except DependencyUnavailable:
            return False
        return not isinstance(result, BaseException)

    async def _send(
        self,
        messages: Sequence[TaskMessage],
        deferrals: int,
        lane: str,
        carry: Mapping[str, str] | None = None,
    ) -> list[str | BaseException]:
        """Publish inside a PRODUCER span whose context the messages carry: the worker's
        ``process_batch`` span is its child, in the same trace."""
        attributes: dict[str, str | int] = {
            "messaging.system": "gcp_pubsub",
            "messaging.operation.name": "publish",
            "messaging.batch.message_count": len(messages),
        }
        with self.tracer.start_as_current_span(
            "publish", kind=SpanKind.PRODUCER, attributes=attributes
        ) as span:
            carried = {**inject_trace_context(), LANE_ATTRIBUTE: lane, **(carry or {})}
            if deferrals:
                carried[DEFERRALS] = str(deferrals)
            results = await self.publisher.publish(messages, carried)
            failed = sum(isinstance(result, BaseException) for result in results)
            if failed:
                span.set_attribute("scrapejobs.publish.failed", failed)
            outage = next((r for r in results if isinstance(r, DependencyUnavailable)), None)
            if outage is not None:
                raise outage
            return results
