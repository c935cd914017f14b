"""The ``actions`` format: what a page's browser actions answered (``options.render.actions``:
options/render/actions.py), in their order: ``screenshots`` and ``pdfs`` (URLs of the files
kept, served as the screenshot format's are), ``scrapes`` (``{"url", "html"}``: the page as it
was at that point) and ``javascript_returns`` (``{"type", "value"}``: what each script returned).
A job with actions gets it whether or not it asked (Firecrawl's ``Document.actions``)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import JsonValue

from .page_format import HTML_ONLY, FormatOptions, FormatUnavailable, Page, PageFormat, Produced


class Actions(PageFormat):
    name = "actions"
    firecrawl = "actions"
    reads = HTML_ONLY
    reads_described = "a rendered HTML page"
    description = "what the page's browser actions answered (options.render.actions)"
    needs_browser: ClassVar[bool] = True

    def produce(self, page: Page, options: FormatOptions | None) -> Produced:
        browser = page.browser
        if browser is None or browser.actions is None:
            raise FormatUnavailable("no browser actions ran on this page")
        answers, urls = browser.actions, browser.urls
        found: dict[str, JsonValue] = {
            "screenshots": [urls[name] for name in answers.screenshots if name in urls],
            "scrapes": [dict(scrape) for scrape in answers.scrapes],
            "javascript_returns": [dict(answer) for answer in answers.javascript_returns],
            "pdfs": [urls[name] for name in answers.pdfs if name in urls],
        }
        return Produced(found)

    def document(self, value: JsonValue) -> JsonValue:
        if not isinstance(value, dict):
            return value
        return {
            "screenshots": value.get("screenshots", []),
            "scrapes": value.get("scrapes", []),
            "javascriptReturns": value.get("javascript_returns", []),
            "pdfs": value.get("pdfs", []),
        }
