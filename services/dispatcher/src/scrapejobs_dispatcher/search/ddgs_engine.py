"""SearchEngine through ``ddgs`` (deedy5/ddgs, MIT): public search engines (Bing, Brave,
DuckDuckGo, Google, Mojeek, Yahoo, Wikipedia...) asked from this process, for a laptop with
internet and no SearXNG (``SCRAPEJOBS_SEARCH_PROVIDER=ddgs``). A deployment's searches are
better served by its own SearXNG (terraform/search.tf): these engines limit how often one
address may ask.

ddgs is synchronous: a search runs on a thread with ddgs's own timeout below the call's
deadline, and the deadline is kept here too. Its answers are dicts whose keys its results.py
names: text ``title``/``href``/``body``, news ``date``/``title``/``body``/``url``/``image``,
images ``title``/``image``/``thumbnail``/``url``. "No results found." is an empty answer, its
TimeoutException a 504, any other of its errors a 502. Categories (SearXNG's) do not narrow
these engines; a language becomes ddgs's region (``de`` → ``de-de``, ``en-GB`` → ``gb-en``)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import Any, Protocol

from scrapejobs_shared.ports.search_engine import (
    SearchFailed,
    SearchHit,
    SearchQuery,
    SearchTimedOut,
)

METHOD = {"web": "text", "news": "news", "images": "images"}
TIME_LIMIT = {"day": "d", "week": "w", "month": "m", "year": "y"}
NO_REGION = "wt-wt"
BARE_LANGUAGE_REGION = {"en": "us-en", "ja": "jp-jp", "zh": "cn-zh", "ko": "kr-kr", "sv": "se-sv"}


class Searcher(Protocol):
    """What of ``ddgs.DDGS`` is used (its text, news and images searches)."""

    def text(self, query: str, **kwargs: Any) -> list[dict[str, Any]]: ...
    def news(self, query: str, **kwargs: Any) -> list[dict[str, Any]]: ...
    def images(self, query: str, **kwargs: Any) -> list[dict[str, Any]]: ...


def ddgs_searcher(timeout_s: float) -> Searcher:
    from ddgs import DDGS

    return DDGS(timeout=max(1, math.floor(timeout_s)))


class DdgsEngine:
    def __init__(
        self,
        backend: str = "auto",
        searcher: Callable[[float], Searcher] = ddgs_searcher,
    ) -> None:
        self._backend = backend
        self._searcher = searcher

    async def search(self, query: SearchQuery, timeout_s: float) -> list[SearchHit]:
        from ddgs.exceptions import DDGSException, TimeoutException

        kwargs: dict[str, Any] = {
            "region": region_of(query.language),
            "safesearch": "moderate",
            "timelimit": TIME_LIMIT.get(query.time_range or ""),
            "max_results": query.limit,
            "backend": self._backend,
        }

        def asked() -> list[dict[str, Any]]:
            searcher = self._searcher(timeout_s * 0.8)
            return getattr(searcher, METHOD[query.source])(query.text, **kwargs)  # type: ignore[no-any-return]

        try:
            async with asyncio.timeout(timeout_s):
                results = await asyncio.to_thread(asked)
        except (TimeoutError, TimeoutException):
            raise SearchTimedOut(
                f"the search provider did not answer within {timeout_s:g} s"
            ) from None
        except DDGSException as exc:
            if "no results found" in str(exc).lower():
                return []
            raise SearchFailed(f"the search engines failed: {exc}") from None
        return hits_of(results, query)[: query.limit]


def hits_of(results: list[dict[str, Any]], query: SearchQuery) -> list[SearchHit]:
    hits = []
    for result in results:
        if not isinstance(result, dict):
            continue
        page = result.get("href") if query.source == "web" else result.get("url")
        if not isinstance(page, str) or not page:
            continue
        image = result.get("image") if query.source != "web" else None
        hits.append(
            SearchHit(
                url=page,
                title=_text(result.get("title")) or "",
                description=_text(result.get("body")) or "",
                date=_text(result.get("date")),
                image_url=_text(image),
                category=query.source if query.source != "web" else None,
            )
        )
    return hits


def region_of(language: str | None) -> str:
    """ddgs's region (country-language) for a language code."""
    if not language:
        return NO_REGION
    lang, _, country = language.lower().replace("_", "-").partition("-")
    if country:
        return f"{country}-{lang}"
    return BARE_LANGUAGE_REGION.get(lang, f"{lang}-{lang}")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
