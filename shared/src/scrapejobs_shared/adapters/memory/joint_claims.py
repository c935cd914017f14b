"""The memory twin's ``claim_together``: each claim alone, in order. A commit of the twin is
one step under its lock, so together and alone decide the same; the Firestore adapter's single
commit (joint_claims.py there) is what saves round trips."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from scrapejobs_shared.domain.batch_transitions import Lane
from scrapejobs_shared.ports.batch_store import BatchStore, ClaimResult, JointClaim


class MemoryJointClaims:
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
