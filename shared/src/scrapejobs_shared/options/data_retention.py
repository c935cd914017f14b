"""``zeroDataRetention``: a scrape's result handed over and not kept. The page's job is deleted
(its result, its batches, its counts) as soon as its answer is read, the page is not kept in the
page cache, and a scrape that times out is cancelled and deleted too (its answer names a job
that is gone). Served where the answer is synchronous (``POST /v1/scrape``, ``/v2/scrape``); a
batch's and a crawl's results are read later, so there it is refused. A deployment that cannot
honour it (backups that keep every document) refuses it: ``SCRAPEJOBS_ZERO_DATA_RETENTION``.
What is kept all the same: the usage counts (pages, not their content) and the logs' lines (a
page's URL and outcome, never its content).

| Firecrawl | native |
|---|---|
| ``zeroDataRetention`` (``/v2/scrape``) | ``zero_data_retention`` (``/v1/scrape``) |"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from .option_family import (
    FirecrawlKind,
    NotServed,
    OptionFamily,
    ServedHere,
)

FIELD = "zero_data_retention"
NOT_HERE = (
    "this deployment keeps every result for its retention period "
    "(SCRAPEJOBS_ZERO_DATA_RETENTION=false)"
)
NOT_CACHED = "a result that is not kept is not kept for reuse either: leave cache_store out"


class DataRetention(OptionFamily):
    name = "data_retention"
    native_fields = {
        "scrape": {
            FIELD: (
                bool,
                Field(
                    default=False,
                    description="true: the result is answered and not kept (the job is "
                    "deleted once its answer is read, or when the wait runs out)",
                ),
            )
        }
    }
    firecrawl_fields = {
        "scrape": {
            FIELD: (
                bool | None,
                Field(
                    default=None,
                    description="true: the Document is answered and not kept (nor cached)",
                ),
            )
        }
    }
    firecrawl_names = {FIELD: "zeroDataRetention"}

    def asked(self, request: Any) -> bool:
        return bool(getattr(request, FIELD, False))

    def body_to_native(self, kind: FirecrawlKind, given: BaseModel, native: dict[str, Any]) -> None:
        if kind == "scrape" and getattr(given, FIELD, None):
            native[FIELD] = True
            native.setdefault("options", {})["cache_store"] = False

    def served(self, request: Any, here: ServedHere) -> NotServed | None:
        if not self.asked(request):
            return None
        if not here.zero_data_retention:
            return NotServed(FIELD, NOT_HERE)
        if request.options.cache_store:
            return NotServed("options.cache_store", NOT_CACHED)
        return None

    def keeps_result(self, request: Any) -> bool:
        return not self.asked(request)


ZERO_DATA_RETENTION = DataRetention()
