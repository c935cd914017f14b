"""The search call of the API client (Firecrawl's ``POST /v2/search`` over the deployment's
SearXNG). Mixed into ``Client``, whose ``_send`` it uses."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import httpx

from scrapejobs_client.models import SearchResults

ANSWER_MARGIN_S = 10.0  # beyond the search's own timeout, for the answer to arrive


class SearchApi:
    _send: Callable[..., httpx.Response]  # Client's: send with retries, raise non-2xx

    def search(
        self,
        query: str,
        *,
        limit: int = 5,
        sources: Sequence[str] = ("web",),
        scrape_formats: Sequence[str] | None = None,
        timeout_ms: int = 60_000,
        **fields: Any,
    ) -> SearchResults:
        """``POST /v2/search``: up to ``limit`` results of each source (web, news, images);
        ``scrape_formats`` (``["markdown"]``): the web and news results scraped through the
        queue too, each with its Document. Never retried when it scrapes (a retry would
        scrape again)."""
        body: dict[str, Any] = {
            "query": query,
            "limit": limit,
            "sources": list(sources),
            "timeout": timeout_ms,
            **fields,
        }
        if scrape_formats is not None:
            body["scrapeOptions"] = {"formats": list(scrape_formats)}
        response = self._send(
            "POST",
            "/v2/search",
            json=body,
            timeout_s=timeout_ms / 1000 + ANSWER_MARGIN_S,
            retries=scrape_formats is None,
        )
        return SearchResults.model_validate(response.json())
