"""UsageMeter on Firestore: ``used`` staged by OutcomeStats (one write: a blind increment of a
random shard of the tenant's slot, never a hot document) and committed alone, without retries:
an increment retried after a lost answer could count twice, so a lost answer counts at most
once."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from scrapejobs_shared.adapters.firestore.call_deadline import CallDeadline, reports_outages
from scrapejobs_shared.adapters.firestore.outcome_stats import DEFAULT_SHARDS, OutcomeStats
from scrapejobs_shared.domain.metered import Metered
from scrapejobs_shared.domain.outcome_stats import Totals, slot_of
from scrapejobs_shared.observability.store_ops import count


@reports_outages
class FirestoreUsageMeter:
    def __init__(
        self, client: Any, deadline: CallDeadline | None = None, shards: int = DEFAULT_SHARDS
    ) -> None:
        self._client = client
        self._deadline = deadline or CallDeadline()
        self._stats = OutcomeStats(client, shards)

    async def meter(self, tenant: str, used: Metered, at: datetime) -> None:
        batch = self._client.batch()
        writes = self._stats.stage(batch, slot_of(at), Totals(metered=used), tenant)
        if writes:
            count(writes=writes)
            await batch.commit(timeout=self._deadline.timeout_s)
