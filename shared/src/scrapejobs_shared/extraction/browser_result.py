"""What the browser made of a page besides its DOM: files (a screenshot, actions'
screenshots and PDFs) and the answers of the page's actions (options/render/actions.py). The
renderer fills ``files`` with their bytes; the worker keeps them in the tenant's file store
before the page is read and leaves their URLs in ``urls``, so the extraction (another
process) receives names and URLs, never the bytes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SCREENSHOT = "screenshot"  # the name of the page's screenshot, before its extension


@dataclass(frozen=True, slots=True)
class PageFile:
    name: str  # ports/file_store.FILE_NAME: "screenshot.png"
    content_type: str
    body: bytes = field(repr=False)


@dataclass(frozen=True, slots=True)
class ActionAnswers:
    """What a page's actions answered, in their order; files by name (their URLs in
    ``BrowserResult.urls`` once kept)."""

    screenshots: tuple[str, ...] = ()
    scrapes: tuple[dict[str, str], ...] = ()  # {"url", "html"}
    javascript_returns: tuple[dict[str, Any], ...] = ()  # {"type", "value"}
    pdfs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class BrowserResult:
    files: tuple[PageFile, ...] = ()  # made by the browser, until kept
    urls: Mapping[str, str] = field(default_factory=dict)  # file name → its URL, once kept
    actions: ActionAnswers | None = None  # the page had actions

    def url_of(self, stem: str) -> str | None:
        """The URL of the kept file named ``stem`` (any extension)."""
        return next((url for name, url in self.urls.items() if name.split(".")[0] == stem), None)

    @property
    def screenshots(self) -> int:
        """Screenshots kept: the page's, and its actions'."""
        taken = self.actions.screenshots if self.actions is not None else ()
        page = sum(1 for name in self.urls if name.split(".")[0] == SCREENSHOT)
        return page + sum(1 for name in taken if name in self.urls)
