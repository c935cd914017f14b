"""Batches written but held back from the broker, and their release.

A job's batches beyond its window on a host (``delivery.batching.hold_beyond``) are stored held:
not published, not active (the reconcile of lost messages leaves them alone). Each time one of
the job's batches of that host finishes its fetches, the worker releases the next and publishes
it; a chain a crash broke is resumed by the reconcile (``stalled_holds``). A crawl's found
batches are all stored held, and released while fewer than its window of their host are
active (``release_to_window``): by the batch that found them, and by each batch of the host
that ends.

A batch deferred until a time (its job's own pace, or its host's, allows no fetch sooner) waits
the same way rather than being published again at once, which would have a delivery hold a
push for nothing: ``wait`` stores it not active until then, ``wake`` makes it active again for
its caller to publish (the worker's timer at its time; a cancel at once; the reconcile when the
timer was lost: ``overdue``). Waiting is apart from the window's hold: a woken batch never
releases another.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from scrapejobs_shared.domain.records import BatchRecord


class HeldBatches(Protocol):
    async def release(
        self, job_id: str, group: str | None, now: datetime, limit: int
    ) -> list[BatchRecord]:
        """Up to ``limit`` held batches of the job (of host ``group``; None: any), in batch-id
        order, no longer held; the caller publishes them. Two releases never release one batch
        twice."""

    async def release_to_window(
        self, job_id: str, group: str, window: int, now: datetime
    ) -> list[BatchRecord]:
        """Held batches of the job's host ``group``, in batch-id order, released until
        ``window`` of the group's batches are active (a crawl's found batches: its window is
        kept by count, as any of its batches may find more). Two callers racing may release
        one or two beyond it between them, never one batch twice."""

    async def stalled_holds(self, updated_before: datetime, limit: int) -> list[tuple[str, str]]:
        """(job, host group) pairs with held batches older than ``updated_before`` and no
        batch of that group active: chains nothing will release (at most ``limit`` held
        batches looked at)."""

    async def wait(
        self, batch: BatchRecord, until: datetime, deferrals: int, now: datetime
    ) -> bool:
        """``batch`` waits until ``until``, keeping ``deferrals`` for its next message. False
        when it cannot wait so (it is gone, or its job's document, holding it, was written
        meanwhile): the caller publishes it again at once."""

    async def wake(self, job_id: str, batch_id: str | None, now: datetime) -> list[BatchRecord]:
        """The job's waiting batches (only ``batch_id``, when given) no longer waiting, with
        their ``wait_deferrals``; the caller publishes them. Two wakes never wake one batch
        twice."""

    async def overdue(self, before: datetime, limit: int) -> list[tuple[str, str]]:
        """(job, batch) of at most ``limit`` batches still waiting for a time before
        ``before``: the wake meant for them was lost."""
