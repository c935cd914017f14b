"""Firecrawl's search as this service runs it: a body becomes a ``SearchAsk`` (a query per
source; a category of web results its own query: ``github`` within github.com, ``research``
SearXNG's science engines, ``pdf`` PDFs), its results become Firecrawl's items (web: url,
title, description, position, category; news: snippet and date; images: imageUrl), and the
results to scrape one job of the scrape options."""

from __future__ import annotations

from typing import Any

from scrapejobs_dispatcher.firecrawl.format_translation import pipeline
from scrapejobs_dispatcher.firecrawl.request_models import ScrapeOptions
from scrapejobs_dispatcher.firecrawl.search_models import Category, SearchBody, SearchBodyV1
from scrapejobs_dispatcher.firecrawl.translation import LABEL, job_options, valid_urls, validated
from scrapejobs_dispatcher.search.web_search import Found, SearchAsk
from scrapejobs_shared.domain.jobspec import JobRequest
from scrapejobs_shared.options import ServedHere
from scrapejobs_shared.ports.search_engine import SearchHit, SearchQuery, SearchSource, TimeRange

TIME_RANGES: dict[str, TimeRange] = {
    "h": "day",  # SearXNG's shortest range
    "d": "day",
    "w": "week",
    "m": "month",
    "y": "year",
}
# a category's words added to the query, and SearXNG's categories it searches
CATEGORIES: dict[Category, tuple[str, tuple[str, ...]]] = {
    "github": ("site:github.com", ()),
    "research": ("", ("science",)),
    "pdf": ("filetype:pdf", ()),
}
SCRAPED: tuple[SearchSource, ...] = ("web", "news")  # images are not pages to scrape


def search_ask(body: SearchBody | SearchBodyV1) -> SearchAsk:
    time_range = TIME_RANGES[body.tbs[-1]] if body.tbs else None
    language = body.language() if isinstance(body, SearchBodyV1) else None
    sources: list[SearchSource] = body.source_names() if isinstance(body, SearchBody) else ["web"]
    categories = body.category_names() if isinstance(body, SearchBody) else []
    queries: list[tuple[str, SearchQuery]] = []
    for source in sources:
        if source != "web" or not categories:
            query = SearchQuery(body.query, source, body.limit, (), language, time_range)
            queries.append(("", query))
            continue
        for category in categories:
            words, searched = CATEGORIES[category]
            text = f"{body.query} {words}".strip()
            queries.append(
                (category, SearchQuery(text, "web", body.limit, searched, language, time_range))
            )
    domains = body.include_domains if isinstance(body, SearchBody) else None
    excluded = body.exclude_domains if isinstance(body, SearchBody) else None
    return SearchAsk(tuple(queries), body.limit, tuple(domains or ()), tuple(excluded or ()))


def to_scrape(found: Found, ignore_invalid: bool) -> tuple[list[str], list[str]]:
    """The results' URLs a job accepts (web and news, once each), and those it does not."""
    urls = list(dict.fromkeys(hit.url for s in SCRAPED for hit in found.by_source.get(s, [])))
    good, bad = valid_urls(urls)
    return good, [] if ignore_invalid else bad


def search_job(options: ScrapeOptions, urls: list[str], here: ServedHere) -> JobRequest:
    """The job that scrapes the results: one of ``urls`` with the scrape options."""
    native = {
        "urls": urls,
        "options": job_options(options, here),
        "pipeline": pipeline(options),
        "labels": {LABEL: "search"},
    }
    return validated(JobRequest, native, "scrapeOptions")


def result_item(source: SearchSource, hit: SearchHit, position: int) -> dict[str, Any]:
    """A result as Firecrawl's search lists it."""
    if source == "images":
        return {"title": hit.title, "imageUrl": hit.image_url, "url": hit.url, "position": position}
    if source == "news":
        item = {"title": hit.title, "url": hit.url, "snippet": hit.description}
        if hit.date:
            item["date"] = hit.date
        if hit.image_url:
            item["imageUrl"] = hit.image_url
        return {**item, "position": position}
    item = {"url": hit.url, "title": hit.title, "description": hit.description}
    if hit.category:
        item["category"] = hit.category
    return {**item, "position": position}
