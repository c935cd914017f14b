"""What the browser made of a page besides its DOM: files (a screenshot) and, later, the
answers of the page's actions. The renderer fills ``files`` with their bytes; the worker keeps
them in the tenant's file store before the page is read and leaves their URLs in ``urls``, so
the extraction (another process) receives names and URLs, never the bytes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

SCREENSHOT = "screenshot"  # the name of the page's screenshot, before its extension


@dataclass(frozen=True, slots=True)
class PageFile:
    name: str  # ports/file_store.FILE_NAME: "screenshot.png"
    content_type: str
    body: bytes = field(repr=False)


@dataclass(frozen=True, slots=True)
class BrowserResult:
    files: tuple[PageFile, ...] = ()  # made by the browser, until kept
    urls: Mapping[str, str] = field(default_factory=dict)  # file name → its URL, once kept

    def url_of(self, stem: str) -> str | None:
        """The URL of the kept file named ``stem`` (any extension)."""
        return next((url for name, url in self.urls.items() if name.split(".")[0] == stem), None)

    @property
    def screenshots(self) -> int:
        return sum(1 for name in self.urls if name.split(".")[0] == SCREENSHOT)
