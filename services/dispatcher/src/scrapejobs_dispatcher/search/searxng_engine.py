"""SearchEngine on SearXNG's JSON API (docs/dev/search_api.rst of searxng/searxng):
``GET {base}/search?q=…&format=json`` with ``categories`` (comma separated), ``language``,
``time_range`` and ``pageno``; its answer ``{"query", "number_of_results", "results": [{"url",
"title", "content", "publishedDate", "img_src", "category", ...}], ...}``. The json format must
be enabled in the instance's settings.yml (``search.formats``): otherwise it answers 403, said
as such. Pages are read until ``limit`` results are found (at most ``MAX_PAGES``), all within
the call's deadline. The instance is trusted configuration: not the SSRF-guarded fetcher."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from scrapejobs_shared.ports.search_engine import (
    SearchFailed,
    SearchHit,
    SearchQuery,
    SearchTimedOut,
)

MAX_PAGES = 5
# SearXNG's category of each source (a query's own categories narrow a web search)
CATEGORY = {"web": "general", "news": "news", "images": "images"}
MAX_ANSWER_BYTES = 5 * 1024 * 1024


class SearxngEngine:
    """A client a search (searches are few: no connection kept between them)."""

    def __init__(
        self,
        base_url: str,
        transport: httpx.AsyncBaseTransport | None = None,
        auth: httpx.Auth | None = None,  # an ID token for an instance behind Cloud Run IAM
    ) -> None:
        self._base = base_url.rstrip("/")
        self._transport = transport
        self._auth = auth

    async def search(self, query: SearchQuery, timeout_s: float) -> list[SearchHit]:
        found: list[SearchHit] = []
        seen: set[str] = set()
        client = httpx.AsyncClient(
            trust_env=False,
            follow_redirects=False,
            transport=self._transport,
            timeout=None,
            auth=self._auth,
        )
        try:
            async with client, asyncio.timeout(timeout_s):
                for page in range(1, MAX_PAGES + 1):
                    hits = await self._page(client, query, page)
                    fresh = [hit for hit in hits if hit.url not in seen]
                    seen.update(hit.url for hit in fresh)
                    found.extend(fresh)
                    if not fresh or len(found) >= query.limit:
                        break
        except TimeoutError:
            raise SearchTimedOut(
                f"the search provider did not answer within {timeout_s:g} s"
            ) from None
        return found[: query.limit]

    async def _page(
        self, client: httpx.AsyncClient, query: SearchQuery, page: int
    ) -> list[SearchHit]:
        params: dict[str, str] = {"q": query.text, "format": "json", "pageno": str(page)}
        params["categories"] = ",".join(query.categories or (CATEGORY[query.source],))
        if query.language:
            params["language"] = query.language
        if query.time_range:
            params["time_range"] = query.time_range
        try:
            response = await client.get(f"{self._base}/search", params=params)
        except httpx.HTTPError as exc:
            raise SearchFailed(f"the search provider could not be reached: {exc!r}") from None
        if response.status_code == 403:
            raise SearchFailed(
                "the search provider refused the json format (SearXNG: enable it in "
                "settings.yml, search.formats: [html, json])"
            )
        if response.status_code != 200:
            raise SearchFailed(f"the search provider answered HTTP {response.status_code}")
        if len(response.content) > MAX_ANSWER_BYTES:
            raise SearchFailed("the search provider's answer is larger than 5 MiB")
        try:
            answer = response.json()
        except ValueError:
            raise SearchFailed("the search provider's answer is not JSON") from None
        return _hits(answer, query)


def _hits(answer: Any, query: SearchQuery) -> list[SearchHit]:
    results = answer.get("results") if isinstance(answer, dict) else None
    if not isinstance(results, list):
        raise SearchFailed("the search provider's answer has no results list")
    hits = []
    for result in results:
        if not isinstance(result, dict) or not isinstance(result.get("url"), str):
            continue
        image = _text(result.get("img_src")) or _text(result.get("thumbnail_src"))
        hits.append(
            SearchHit(
                url=result["url"],
                title=_text(result.get("title")) or "",
                description=_text(result.get("content")) or "",
                date=_text(result.get("publishedDate")),
                image_url=image if query.source != "web" else None,
                category=_text(result.get("category")),
            )
        )
    return hits


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
