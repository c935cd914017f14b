"""Batches written but held back from the broker, and their release.

A job's batches beyond its window on a host (``delivery.batching.hold_beyond``) are stored held:
not published, not active (the reconcile of lost messages leaves them alone). Each time one of
the job's batches of that host finishes its fetches, the worker releases the next and publishes
it; a chain a crash broke is resumed by the reconcile (``stalled_holds``).
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

    async def stalled_holds(self, updated_before: datetime, limit: int) -> list[tuple[str, str]]:
        """(job, host group) pairs with held batches older than ``updated_before`` and no
        batch of that group active: chains nothing will release (at most ``limit`` held
        batches looked at)."""
