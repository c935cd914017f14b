"""Run by tests/e2e/test_firecrawl_sdk_releases.py in an environment holding only one pinned
firecrawl-py release (``uv run --no-project --with firecrawl-py==X``): the SDK's calls with its
own defaults, unmodified, against the stack's /v2 and the test site. Prints one JSON object of
what each call gave (or the error it raised), for the test to judge. Imports nothing of the
project's: it is what a Firecrawl user's script would be."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from importlib.metadata import version
from typing import Any

import requests  # firecrawl-py's own HTTP client
from firecrawl import Firecrawl


def _meta(doc: Any) -> dict[str, Any]:
    meta = doc.metadata
    if meta is None:
        return {}
    return meta if isinstance(meta, dict) else meta.model_dump(exclude_none=True)


def _docs(docs: list[Any]) -> list[dict[str, Any]]:
    return [{"markdown": d.markdown, "metadata": _meta(d)} for d in docs]


def _call(out: dict[str, Any], name: str, run: Callable[[], dict[str, Any]]) -> None:
    try:
        out[name] = run()
    except Exception as exc:  # reported, judged by the test
        out[name] = {"error": f"{type(exc).__name__}: {exc}"}


def main() -> None:
    api_url, site, tag = sys.argv[1:4]
    firecrawl = Firecrawl(api_key="fc-local", api_url=api_url)
    out: dict[str, Any] = {"version": version("firecrawl-py")}

    def scrape() -> dict[str, Any]:
        doc = firecrawl.scrape(f"{site}/product/7?t={tag}", formats=["markdown", "links"])
        return {"markdown": doc.markdown, "links": doc.links, "metadata": _meta(doc)}

    def batch() -> dict[str, Any]:
        urls = [f"{site}/product/{n}?t={tag}" for n in range(500, 620)]  # two pages of 100
        job = firecrawl.batch_scrape(urls, formats=["markdown"], poll_interval=1)
        docs = _docs(job.data)
        followed = 0
        page = job.next  # 3.x gives the first page and its next URL; 4.x follows it itself
        while page:
            answer = requests.get(page, headers={"Authorization": "Bearer fc-local"}, timeout=30)
            answer.raise_for_status()
            body = answer.json()
            docs += [{"markdown": d.get("markdown")} for d in body["data"]]
            page, followed = body.get("next"), followed + 1
        return {
            "status": job.status,
            "total": job.total,
            "completed": job.completed,
            "followed": followed,
            "data": docs,
        }

    def crawl() -> dict[str, Any]:
        job = firecrawl.crawl(
            f"{site}/fc/",
            limit=20,
            scrape_options={"formats": ["markdown"]},  # the SDK's scrape defaults come along
            poll_interval=1,
            timeout=120,
        )
        return {"status": job.status, "total": job.total, "data": _docs(job.data)}

    def site_map() -> dict[str, Any]:
        found = firecrawl.map(f"{site}/fc/")
        return {"links": [link.url for link in found.links]}

    for name, run in (("scrape", scrape), ("batch", batch), ("crawl", crawl), ("map", site_map)):
        _call(out, name, run)
    sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
