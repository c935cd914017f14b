"""``cache``: reusing a page fetched lately for the same result, and keeping the pages fetched
for later jobs (the worker's page cache: ports/page_cache.py).

| Firecrawl | native |
|---|---|
| ``maxAge`` (ms; Firecrawl's 4 hours unset) | ``options.cache_max_age_s`` (whole seconds) |
| ``storeInCache`` | ``options.cache_store`` |

On an upload (nothing is fetched) both are accepted and do nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, Field

from scrapejobs_shared.extraction.field_types import JSON_INT

from .option_family import OptionFamily, ServedHere

MAX_CACHE_AGE_S = 172_800  # how long a page cache entry is kept (and the most it is asked for)
DEFAULT_MAX_AGE_MS = 14_400_000  # Firecrawl's own default (its SDKs send it)


@dataclass(frozen=True, slots=True)
class CachePolicy:
    """What a job asks of the page cache."""

    max_age_s: int
    store: bool


def cache_age_s(max_age_ms: int | None) -> int:
    """``maxAge`` (ms; Firecrawl's default when absent) as the native cache age (whole seconds,
    at most what the cache keeps)."""
    age_ms = DEFAULT_MAX_AGE_MS if max_age_ms is None else max_age_ms
    return min(age_ms // 1000, MAX_CACHE_AGE_S)


class PageCache(OptionFamily):
    name = "cache"
    native_fields = {
        "options": {
            "cache_max_age_s": (
                Annotated[int, Field(ge=0, le=MAX_CACHE_AGE_S), JSON_INT],
                Field(
                    default=0,
                    description="Reuse the result of a page fetched this recently (seconds, "
                    "at most 172,800) by a job asking for the same result (URL, fields, "
                    "formats, content, headers, rendering, stages); 0: always fetch. Not for "
                    "crawls or jobs with an ai stage",
                ),
            ),
            "cache_store": (
                bool,
                Field(
                    default=False,
                    description="Keep each page fetched for later jobs' cache_max_age_s "
                    "(for 2 days)",
                ),
            ),
        }
    }
    firecrawl_fields = {
        "scrape_options": {
            "max_age": (
                Annotated[int, Field(ge=0), JSON_INT] | None,
                Field(
                    default=None,
                    description="ms: reuse a page fetched this recently for the same result "
                    "(default 4 hours; 0: fetch fresh; crawls always fetch)",
                ),
            ),
            "store_in_cache": (
                bool,
                Field(default=True, description="Keep the pages fetched for reuse"),
            ),
        }
    }
    uploads = "ignored"

    def of(self, options: Any) -> CachePolicy:
        return CachePolicy(options.cache_max_age_s, options.cache_store)

    def max_age_ms(self, given: BaseModel) -> int | None:
        """Firecrawl's ``maxAge`` as asked (None: unset)."""
        asked: int | None = getattr(given, "max_age", None)
        return asked

    def options_to_native(self, given: BaseModel, native: dict[str, Any], here: ServedHere) -> None:
        native["cache_max_age_s"] = cache_age_s(self.max_age_ms(given))
        native["cache_store"] = getattr(given, "store_in_cache", True)


PAGE_CACHE = PageCache()
