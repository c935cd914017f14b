"""What a tenant used outside any page's fetch (a search asked of the provider), added to the
outcome totals of the moment's slot beside what its pages used: in usage (credits) and the
stats as pages' figures are. Adapters: Firestore (a blind increment of a random shard of the
tenant's slot: a search is metered in the request that asked it) and the memory twin."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from scrapejobs_shared.domain.metered import Metered


class UsageMeter(Protocol):
    async def meter(self, tenant: str, used: Metered, at: datetime) -> None:
        """Add ``used`` to ``tenant``'s totals of the slot holding ``at``."""
