"""Which part of a page the ``markdown`` and ``clean_html`` formats give, and ``clean_html``
itself: the page's markup without what is not content.

A scope has three settings (``options.content`` of a job):

* ``main_only`` (default true): the page's main content (:mod:`.main_content`: the article,
  product, thread or listing, without navigation, the page's header and footer, asides,
  related lists, comments under an article, consent and promotion blocks);
* ``include``: CSS selectors; when given, only the elements they match (in document order,
  an element inside another match given once), without boilerplate when ``main_only``
  (:func:`.main_content.without_boilerplate`) but not cut down to the main content;
* ``exclude``: CSS selectors whose elements are left out (applied before ``include``).

``clean_html`` is always without scripts, styles, ``<noscript>``, ``<template>``, comments and
the ``<head>``; its links (``href``, ``src``) are absolute against the document's base URL.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from cssselect import GenericTranslator
from lxml import etree  # type: ignore[import-untyped]

from .main_content import UNDECLARED, Declared, declared, main_content, without_boilerplate
from .main_content.survey import drop
from .urls import resolve_url

_NOT_CONTENT = etree.XPath(
    "//script | //style | //noscript | //template | //head | //comment()",
    smart_strings=False,
)
_LINKED = etree.XPath("//*[@href or @src]", smart_strings=False)


@dataclass(frozen=True, slots=True)
class ContentScope:
    main_only: bool = True
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @property
    def narrowed(self) -> bool:
        """Whether anything but the default (main content, nothing included or excluded)."""
        return not self.main_only or bool(self.include or self.exclude)


DEFAULT_SCOPE = ContentScope()


@functools.lru_cache(maxsize=512)
def _css(selector: str) -> Any:
    return etree.XPath(GenericTranslator().css_to_xpath(selector), smart_strings=False)


def scoped_markup(root: Any, scope: ContentScope, url: str = "") -> str:
    """The markup of ``root``'s content in ``scope`` (for markdown); ``url``: where the page
    was found. ``root`` itself is left as it was."""
    return _scoped(_working_copy(root, scope), scope, _declared(root, scope, url), clean=False)


def clean_html(root: Any, base_url: str, scope: ContentScope = DEFAULT_SCOPE, url: str = "") -> str:
    """The ``clean_html`` format: see the module's docstring. ``root`` itself is left as it
    was."""
    doc = _working_copy(root, scope)
    for element in _LINKED(doc):
        for attribute in ("href", "src"):
            value = element.get(attribute)
            if value is not None:
                element.set(attribute, resolve_url(base_url, value))
    # The page's own markup: no heading made of its <title>, no list made of its schema.org data.
    page = dataclasses.replace(_declared(root, scope, url or base_url), title="", facts=())
    return _scoped(doc, scope, page, clean=True).strip()


def _working_copy(root: Any, scope: ContentScope) -> Any:
    """A copy of ``root`` to cut down: of its body alone for the main content (the head, its
    scripts and styles, is most of what a copy costs and none of the content)."""
    if scope.main_only and not scope.include:
        body = root.find(".//body")
        if body is not None:
            return _plain(copy.deepcopy(body))
    return _plain(copy.deepcopy(root))


def _plain(element: Any) -> Any:
    """``element`` (a copy) moved into a document of lxml's own element class: lxml.html's
    classes cost a call into Python for every element the stages look at (7% of the time of
    the main content's markdown), and nothing here uses their methods."""
    holder = etree.Element("document")
    holder.append(element)
    return element


def _declared(root: Any, scope: ContentScope, url: str) -> Declared:
    return declared(root, url) if scope.main_only else UNDECLARED


def _scoped(doc: Any, scope: ContentScope, page: Declared, *, clean: bool) -> str:
    """The markup of ``doc``'s content in ``scope``, cutting ``doc`` down in place (``clean``:
    without scripts, styles, comments and the head; ``page``: what the page says of itself)."""
    if clean:
        drop(_NOT_CONTENT(doc))
    drop(_matches(doc, scope.exclude))
    if scope.main_only and not scope.include:
        found = main_content(doc, page=page)
        return "" if found is None else _serialize(found)
    if scope.include:
        kept = _outermost(doc, _matches(doc, scope.include))
        if scope.main_only:  # the boilerplate inside what was asked for
            for element in kept:
                without_boilerplate(element, kind=page.kind)
        return "".join(_serialize(element) for element in kept)
    body = doc.find(".//body")
    if body is None:
        return _serialize(doc)
    return (body.text or "") + "".join(_serialize(child) for child in body)


def _matches(doc: Any, selectors: Iterable[str]) -> list[Any]:
    found: dict[Any, None] = {}
    for selector in selectors:
        for element in _css(selector)(doc):
            found[element] = None
    return list(found)


def _outermost(doc: Any, elements: list[Any]) -> list[Any]:
    """``elements`` in document order, without those inside another of them."""
    chosen = set(elements)
    order = {element: n for n, element in enumerate(doc.iter())}
    kept = [e for e in elements if not any(a in chosen for a in e.iterancestors())]
    return sorted(kept, key=order.__getitem__)


def _serialize(element: Any) -> str:
    markup: str = etree.tostring(element, method="html", encoding="unicode", with_tail=False)
    return markup
