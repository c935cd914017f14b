"""The tenant's pages a day (``pages_per_day``): past it, a ``QuotaExceeded`` (a 429 naming
the quota, with ``Retry-After``)."""

from __future__ import annotations

from scrapejobs_dispatcher.submission_rules.rules import Submission
from scrapejobs_dispatcher.tenant_quotas import Quotas


class DailyQuota:
    def __init__(self, quotas: Quotas) -> None:
        self._quotas = quotas

    async def admit(self, submission: Submission) -> None:
        await self._quotas.check(submission.tenant)
