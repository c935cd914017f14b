"""A bundle's claims on Firestore in one commit (issue 39).

A bundle message carries several coalesced jobs that each hold their batch; the worker claims
them together: one commit of n guarded updates, one round trip instead of n. The commit is
atomic: when any guard fails (a cancel, a duplicate delivery, a replay wrote a job since its
token), nothing is written and each is claimed alone, as without a bundle, which decides it on
what the store holds."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime

from google.api_core import exceptions as gexc

from scrapejobs_shared.adapters.firestore import plain_writes
from scrapejobs_shared.adapters.firestore.batch_claims import FirestoreBatchClaims, claimed_in_job
from scrapejobs_shared.adapters.firestore.batch_in_job import claim_updates, first_claim
from scrapejobs_shared.adapters.firestore.call_deadline import reports_outages
from scrapejobs_shared.adapters.firestore.store_base import reserved
from scrapejobs_shared.domain import batch_transitions
from scrapejobs_shared.observability.store_ops import count
from scrapejobs_shared.ports.batch_store import ClaimResult, JointClaim, joined


@reports_outages
class FirestoreJointClaims(FirestoreBatchClaims):
    async def claim_together(
        self, claims: Sequence[JointClaim], now: datetime, lease_until: datetime
    ) -> list[ClaimResult]:
        firsts = [
            None if reserved(c.job_id) else first_claim(c.job_id, c.batch_id, c.claim_token)
            for c in claims
        ]
        if len(claims) > 1 and all(firsts):
            commit = self._client.batch()
            staged = []
            for first in firsts:
                assert first is not None
                applied = batch_transitions.claim(first.batch, lease_until, "fetch")
                updates = claim_updates(applied.batch, first.status, None, now)
                ref = self._job_ref(first.batch.job_id)
                plain_writes.stage_update(commit, self._client, ref, updates, first.update_time)
                staged.append((first, applied.batch))
            count(writes=len(staged))
            try:
                results = await commit.commit(**self._deadline.call)
            except (gexc.FailedPrecondition, gexc.NotFound):
                pass  # one of them was written since its token (or deleted): each alone
            else:
                return [
                    claimed_in_job(batch, first.status, result.update_time, first.room)
                    for (first, batch), result in zip(staged, results, strict=True)
                ]
        return list(
            await asyncio.gather(*(self.claim_batch(joined(c, now, lease_until)) for c in claims))
        )
