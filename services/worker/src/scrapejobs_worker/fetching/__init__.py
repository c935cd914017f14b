"""SSRF-safe httpx adapter for the worker's ``Fetcher`` port (see ``safe_fetcher``)."""

from scrapejobs_worker.fetching.config import FetchPolicy
from scrapejobs_worker.fetching.safe_fetcher import SafeFetcher, build_fetcher

__all__ = ["FetchPolicy", "SafeFetcher", "build_fetcher"]
