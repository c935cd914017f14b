"""The ``metadata`` format: what a page says about itself in its head.

``{"title", "description", "canonical", "language", "open_graph", "dublin_core", "keywords",
"robots", "favicon", "url", "content_type"}``:

* ``title``: the first ``<title>`` (in the head when there is one), whitespace normalised;
* ``description``: ``<meta name="description">``;
* ``canonical``: ``<link rel="canonical">``, absolute (resolved against the base URL);
* ``language``: ``<html lang>`` (or ``xml:lang``), else the first language of
  ``<meta http-equiv="Content-Language">``;
* ``open_graph``: every ``og:*`` meta (``property``, or ``name`` as some sites write it),
  keyed by its lower-cased name (``"og:title"``); the first occurrence wins for repeated
  keys; URL properties (``og:url``, ``og:image``, ``og:video``, ``og:audio`` and their
  ``:url`` / ``:secure_url`` forms) are absolute;
* ``dublin_core``: every Dublin Core meta (``dc.*`` and ``dcterms.*``, by ``name`` or
  ``property``), keyed by its lower-cased name (``"dcterms.created"``), the first one winning;
* ``keywords`` and ``robots``: those metas, whitespace normalised;
* ``favicon``: the first ``<link rel="icon">`` (or ``shortcut icon``), absolute.
* ``url`` and ``content_type``: where the page was found (the final URL, after redirects) and
  its media type (``text/html``), as the response said.

Missing values are ``null`` (``open_graph`` and ``dublin_core`` are ``{}``).
"""

from __future__ import annotations

from typing import Any

from pydantic import JsonValue

from .urls import resolve_url
from .visible_text import element_text

_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_DUBLIN_CORE = ("dc.", "dcterms.")
_PLAIN = frozenset({"keywords", "robots"})
_RELS = frozenset({"canonical", "icon"})  # "shortcut icon" holds icon too
_OPEN_GRAPH_URLS = frozenset(
    f"og:{kind}{suffix}"
    for kind in ("image", "video", "audio")
    for suffix in ("", ":url", ":secure_url")
) | {"og:url"}


def page_metadata(
    root: Any, base_url: str, url: str | None = None, content_type: str | None = None
) -> dict[str, JsonValue]:
    """The ``metadata`` format for a parsed HTML page (``root``: its lxml root element; ``url``
    the final URL, ``content_type`` the response's media type). One pass over the document's
    ``title``, ``meta`` and ``link`` elements."""
    head = _Head(base_url)
    for element in root.iter("title", "meta", "link"):
        if element.tag == "title":
            head.title(element)
        elif element.tag == "link":
            head.link(element)
        else:
            head.meta(element)
    return {
        "title": element_text(head.title_element) if head.title_element is not None else None,
        "description": head.description,
        "canonical": _absolute(base_url, head.links.get("canonical")),
        "language": _document_language(root) or head.content_language,
        "open_graph": head.open_graph,
        "dublin_core": head.dublin_core,
        "keywords": head.plain.get("keywords"),
        "robots": head.plain.get("robots"),
        "favicon": _absolute(base_url, head.links.get("icon")),
        "url": url,
        "content_type": content_type,
    }


class _Head:
    """What a page's title, meta and link elements say, the first of each kind kept."""

    def __init__(self, base_url: str) -> None:
        self._base_url = base_url
        self.description: str | None = None
        self.content_language: str | None = None
        self.open_graph: dict[str, JsonValue] = {}
        self.dublin_core: dict[str, JsonValue] = {}
        self.plain: dict[str, str] = {}  # keywords, robots
        self.title_element: Any = None  # the first <title> in the head, else the first anywhere
        self._title_in_head = False
        self.links: dict[str, str] = {}  # canonical, icon: the first href of each

    def title(self, element: Any) -> None:
        if self._title_in_head:
            return
        in_head = any(a.tag == "head" for a in element.iterancestors())
        if self.title_element is None or in_head:
            self.title_element, self._title_in_head = element, in_head

    def link(self, element: Any) -> None:
        href = element.get("href")
        if href is not None:
            for rel in _RELS.intersection(element.get("rel", "").lower().split()):
                self.links.setdefault(rel, href)

    def meta(self, element: Any) -> None:
        content = element.get("content")
        if content is None:
            return
        name = (element.get("property") or element.get("name") or "").strip().lower()
        if name == "description" and self.description is None:
            self.description = " ".join(content.split())
        elif name.startswith("og:") and name not in self.open_graph:
            value = content.strip()
            urls = name in _OPEN_GRAPH_URLS
            self.open_graph[name] = resolve_url(self._base_url, value) if urls else value
        elif name.startswith(_DUBLIN_CORE) and name not in self.dublin_core:
            self.dublin_core[name] = " ".join(content.split())
        elif name in _PLAIN and name not in self.plain:
            self.plain[name] = " ".join(content.split())
        elif self.content_language is None and _is_content_language(element):
            self.content_language = content.split(",")[0].strip() or None


def _absolute(base_url: str, href: str | None) -> str | None:
    return None if href is None else resolve_url(base_url, href)


def _document_language(root: Any) -> str | None:
    if not isinstance(root.tag, str) or root.tag.lower() != "html":
        return None
    language = root.get("lang") or root.get(_XML_LANG)
    return language.strip() or None if language else None


def _is_content_language(meta: Any) -> bool:
    return str(meta.get("http-equiv", "")).strip().lower() == "content-language"
