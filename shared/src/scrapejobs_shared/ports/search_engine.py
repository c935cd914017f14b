"""The port through which the dispatcher searches the web: a query in, the results a search
provider found out (their URL, title and description; a news result's date, an image's URL).
The provider is trusted configuration (``SCRAPEJOBS_SEARCH_PROVIDER``, ``SCRAPEJOBS_SEARXNG_URL``),
never a caller's input; each call has a deadline. Adapters (dispatcher ``search/``): SearXNG's
JSON API, and ddgs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, get_args

from scrapejobs_shared.errors import ScrapejobsError, Unavailable

SearchSource = Literal["web", "news", "images"]
SOURCES: tuple[SearchSource, ...] = get_args(SearchSource)
TimeRange = Literal["day", "week", "month", "year"]
MAX_RESULTS = 100


@dataclass(frozen=True, slots=True)
class SearchQuery:
    text: str
    source: SearchSource = "web"
    limit: int = 5  # results wanted (at most MAX_RESULTS)
    categories: tuple[str, ...] = ()  # the provider's own (it, science, files...)
    language: str | None = None  # a language code (de, en-US)
    time_range: TimeRange | None = None


@dataclass(frozen=True, slots=True)
class SearchHit:
    url: str
    title: str = ""
    description: str = ""
    date: str | None = None  # as the provider wrote it (a news result's)
    image_url: str | None = None  # an image result's image (its page: ``url``)
    category: str | None = None


class SearchEngine(Protocol):
    async def search(self, query: SearchQuery, timeout_s: float) -> list[SearchHit]:
        """Up to ``query.limit`` results, best first, within ``timeout_s``;
        ``SearchFailed`` or ``SearchTimedOut`` otherwise."""


class SearchNotConfigured(Unavailable):
    """No search provider here: a ``503`` naming the setting (never a 404)."""

    code = "search_unavailable"

    def __init__(self) -> None:
        super().__init__(
            "no search provider is configured here (SCRAPEJOBS_SEARXNG_URL names a SearXNG "
            "instance whose settings.yml enables the json format; or "
            "SCRAPEJOBS_SEARCH_PROVIDER=ddgs asks public engines from the dispatcher)"
        )


class SearchFailed(ScrapejobsError):
    """The search provider answered with an error or something that is not its JSON: ``502``."""

    status = 502
    code = "search_failed"


class SearchTimedOut(ScrapejobsError):
    """The search provider did not answer within the request's time: ``504``."""

    status = 504
    code = "search_timeout"
