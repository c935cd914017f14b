"""The memory twin's ``claim_together`` and ``settle_together``: each claim and settle alone,
in order. A commit of the twin is one step under its lock, so together and alone decide the
same; the Firestore adapter's single commit (joint_commits.py there) is what saves writes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from scrapejobs_shared.domain.batch_transitions import Lane
from scrapejobs_shared.domain.workers import WorkerBeat
from scrapejobs_shared.ports.job_store import (
    BatchStore,
    ClaimResult,
    JointClaim,
    JointSettle,
    Settled,
)


class MemoryJointCommits:
    async def claim_together(
        self: BatchStore,
        claims: Sequence[JointClaim],
        now: datetime,
        lease_until: datetime,
        *,
        lane: Lane = "fetch",
    ) -> list[ClaimResult]:
        return [
            await self.claim_batch(
                c.job_id,
                c.batch_id,
                now,
                lease_until,
                mark_started=True,
                lane=lane,
                claim_token=c.claim_token,
            )
            for c in claims
        ]

    async def settle_together(
        self: BatchStore,
        settles: Sequence[JointSettle],
        now: datetime,
        beat: WorkerBeat | None = None,
    ) -> list[Settled]:
        return [
            await self.settle(s.handle, s.changes, now, s.lease_until, beat if i == 0 else None)
            for i, s in enumerate(settles)
        ]
