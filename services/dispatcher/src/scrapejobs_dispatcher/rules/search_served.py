"""A job or a monitor whose pages a search finds needs a search provider here: without one it
is refused at once (the 503 naming the setting), never a monitor whose every check fails to
start."""

from __future__ import annotations

from scrapejobs_dispatcher.rules.rules import JobShape
from scrapejobs_shared.domain.jobspec import JobRequest
from scrapejobs_shared.ports.search_engine import SearchNotConfigured


class SearchServed:
    def __init__(self, configured: bool) -> None:
        self._configured = configured

    async def check(self, job: JobShape, tenant: str) -> None:
        if isinstance(job, JobRequest) and job.search is not None and not self._configured:
            raise SearchNotConfigured()
