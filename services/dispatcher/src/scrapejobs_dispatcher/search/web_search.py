"""The searches a caller asks for: each source (web, news, images) asked of the provider at once
within the caller's time, results outside the domains asked for left out, and each answer kept
per tenant for ``cache_s`` (an agent asking the same query in a loop costs the provider once;
another tenant's answer is never served). No provider configured: ``SearchNotConfigured``.

Each search answered is metered to its tenant (ports/usage_meter.py), a kept answer too, as
Firecrawl charges each call: a credit a started ten results. A meter that cannot be written
(a Firestore outage) leaves the search uncharged, logged, rather than unanswered."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from urllib.parse import urlsplit

from scrapejobs_shared.domain.metered import Metered
from scrapejobs_shared.ports.dependency_unavailable import DependencyUnavailable
from scrapejobs_shared.ports.search_engine import (
    MAX_RESULTS,
    SearchEngine,
    SearchHit,
    SearchNotConfigured,
    SearchQuery,
    SearchSource,
)
from scrapejobs_shared.ports.usage_meter import UsageMeter

log = logging.getLogger(__name__)
CACHED = 1000  # answers kept per process at most
WIDER = 3  # results asked for per one wanted, when some will be left out by domain
RESULTS_A_CREDIT = 10  # a search's results are counted in tens, as Firecrawl's pricing does


@dataclass(frozen=True, slots=True)
class SearchAsk:
    """A caller's search: ``queries`` of a source each (a category may add its own query)."""

    queries: tuple[tuple[str, SearchQuery], ...]  # (the category it stands for, or "")
    limit: int = 5  # results per source at most
    include_domains: tuple[str, ...] = ()
    exclude_domains: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Found:
    """Results by source, best first; each web result with the category that found it."""

    by_source: dict[SearchSource, list[SearchHit]] = field(default_factory=dict)

    def hits(self) -> list[SearchHit]:
        return [hit for hits in self.by_source.values() for hit in hits]

    @property
    def credits(self) -> int:
        return -(-len(self.hits()) // RESULTS_A_CREDIT)


class WebSearch:
    def __init__(
        self,
        engine: SearchEngine | None,
        cache_s: float,
        meter: UsageMeter | None = None,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._engine = engine
        self._cache_s = cache_s
        self._meter = meter
        self._clock = clock
        self._now = now
        self._kept: OrderedDict[tuple[str, SearchAsk], tuple[float, Found]] = OrderedDict()

    @property
    def configured(self) -> bool:
        return self._engine is not None

    async def find(self, tenant: str, ask: SearchAsk, timeout_s: float) -> Found:
        found = await self._found(tenant, ask, timeout_s)
        if self._meter is not None:
            used = Metered(searches=1, search_credits=found.credits)
            try:
                await self._meter.meter(tenant, used, self._now())
            except DependencyUnavailable:
                log.warning("a search not metered: the store is unavailable", exc_info=True)
        return found

    async def _found(self, tenant: str, ask: SearchAsk, timeout_s: float) -> Found:
        if self._engine is None:
            raise SearchNotConfigured()
        key = (tenant, ask)
        kept = self._kept.get(key)
        if kept is not None and kept[0] > self._clock():
            return kept[1]
        engine = self._engine
        filtered = bool(ask.include_domains or ask.exclude_domains)
        wanted = min(MAX_RESULTS, ask.limit * WIDER) if filtered else ask.limit
        answers = await asyncio.gather(
            *(engine.search(replace(query, limit=wanted), timeout_s) for _, query in ask.queries)
        )
        by_source: dict[SearchSource, list[SearchHit]] = {}
        seen: set[tuple[SearchSource, str]] = set()
        for (category, query), hits in zip(ask.queries, answers, strict=True):
            listed = by_source.setdefault(query.source, [])
            for hit in hits:
                if (query.source, hit.url) in seen or not _within(hit.url, ask):
                    continue
                seen.add((query.source, hit.url))
                # Firecrawl's category of a result: the one whose query found it, if any
                listed.append(replace(hit, category=category or None))
        found = Found({source: hits[: ask.limit] for source, hits in by_source.items()})
        self._keep(key, found)
        return found

    def _keep(self, key: tuple[str, SearchAsk], found: Found) -> None:
        if self._cache_s <= 0:
            return
        self._kept[key] = (self._clock() + self._cache_s, found)
        self._kept.move_to_end(key)
        while len(self._kept) > CACHED:
            self._kept.popitem(last=False)


def _within(url: str, ask: SearchAsk) -> bool:
    host = (urlsplit(url).hostname or "").lower()

    def under(domain: str) -> bool:
        domain = domain.lower().strip(".")
        return host == domain or host.endswith("." + domain)

    if ask.include_domains and not any(under(d) for d in ask.include_domains):
        return False
    return not any(under(d) for d in ask.exclude_domains)
