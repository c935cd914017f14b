"""Where a job's pages come from when its request does not list them: a source (a search, in
search/search_targets.py) turns such a request into one of URLs as the job is submitted, on
every way in (``/v1/jobs``, the ``/v2`` routes, a monitor's check). An idempotency key's
fingerprint is the request as it came (a retry replays the job, never searches again)."""

from __future__ import annotations

from typing import Protocol

from scrapejobs_shared.domain.jobspec import JobRequest
from scrapejobs_shared.errors import InvalidInput


class JobSources(Protocol):
    def finds(self, request: JobRequest) -> bool:
        """Whether ``request``'s pages are found anew by a source (a retry of it must find
        its job first, never ask the source again)."""
        ...

    async def resolved(self, request: JobRequest, tenant: str) -> JobRequest:
        """``request`` with its pages as URLs (a request that lists them as it is)."""
        ...


class ListedOnly:
    """No source beyond the request's own URLs or crawl: a search target is refused."""

    def finds(self, request: JobRequest) -> bool:
        return False

    async def resolved(self, request: JobRequest, tenant: str) -> JobRequest:
        if request.search is not None:
            raise InvalidInput("search: this deployment takes no search targets", "search")
        return request
