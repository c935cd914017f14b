"""``pace``: how a job's pages are asked of each site: robots.txt obeyed or not, fetches at
once per host, and request starts per second per host (a pace slower than the host's own paces
only this job: politeness/job_pace.py).

| Firecrawl | native |
|---|---|
| batch and crawl ``maxConcurrency`` | ``options.per_host_concurrency`` |
| crawl ``delay`` (s) | ``options.per_host_rps`` (1 / delay) |
| crawl ``ignoreRobotsTxt`` | ``options.respect_robots`` (its negation) |"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, Field

from scrapejobs_shared.extraction.field_types import JSON_INT

from .option_family import FieldSpec, FirecrawlKind, OptionFamily

# The slowest pace a job may ask for toward a host (one request per 100 s): a job's pace is its
# own (politeness/job_pace.py), and a slower one would only leave its tasks waiting for days.
MIN_PER_HOST_RPS = 0.01
MAX_REQUEST_DELAY_S = 1 / MIN_PER_HOST_RPS
MAX_PER_HOST_CONCURRENCY = 64
Concurrency = Annotated[int, Field(ge=1, le=MAX_PER_HOST_CONCURRENCY), JSON_INT]


@dataclass(frozen=True, slots=True)
class Pace:
    """What a job asks of its pace toward each host (None: the deployment's)."""

    respect_robots: bool
    concurrency: int | None
    rps: float | None


def _concurrency(described: str) -> FieldSpec:
    return (Concurrency | None, Field(default=None, description=described))


class JobPace(OptionFamily):
    name = "pace"
    native_fields = {
        "options": {
            "respect_robots": (
                bool,
                Field(default=True, description="Obey robots.txt (RFC 9309)"),
            ),
            "per_host_concurrency": (Concurrency | None, Field(default=None)),
            "per_host_rps": (
                float | None,
                Field(
                    default=None,
                    ge=MIN_PER_HOST_RPS,
                    le=100,
                    description="Request starts per second to each host for this job's pages "
                    "(0.01, one every 100 s, to 100). A pace slower than the host's own paces "
                    "only this job; a faster one gets the host's (the deployment's rate, the "
                    "site's Crawl-delay up to 60 s)",
                ),
            ),
        }
    }
    firecrawl_fields = {
        "batch": {"max_concurrency": _concurrency("Fetches at once for each host of the batch")},
        "crawl": {
            "ignore_robots_txt": (bool, Field(default=False)),
            "delay": (
                float | None,
                Field(
                    default=None,
                    ge=0.01,
                    le=MAX_REQUEST_DELAY_S,
                    description="Seconds between this crawl's requests to the site (0.01 to "
                    "100); a delay longer than the site's own pace paces only this crawl",
                ),
            ),
            "max_concurrency": _concurrency("Fetches at once for each host of the crawl"),
        },
    }
    firecrawl_names = {
        "options.per_host_concurrency": "maxConcurrency",
        "options.per_host_rps": "delay",
    }

    def of(self, options: Any) -> Pace:
        return Pace(options.respect_robots, options.per_host_concurrency, options.per_host_rps)

    def body_to_native(self, kind: FirecrawlKind, given: BaseModel, native: dict[str, Any]) -> None:
        options = native.setdefault("options", {})
        if (concurrency := getattr(given, "max_concurrency", None)) is not None:
            options["per_host_concurrency"] = concurrency
        if kind != "crawl":
            return
        if (delay := getattr(given, "delay", None)) is not None:
            options["per_host_rps"] = 1 / delay
        options["respect_robots"] = not getattr(given, "ignore_robots_txt", False)


JOB_PACE = JobPace()
