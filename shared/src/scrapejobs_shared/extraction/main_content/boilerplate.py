"""What is never a page's content: what no reader reads, and the page's chrome.

* :func:`strip_never_content`: scripts, styles, templates, embedded objects and frames, the
  head, text inputs, comments: always.
* :func:`surely_boilerplate`: form controls, hidden elements (``hidden``, ``aria-hidden``,
  ``display: none``), the page's navigation, banner, footer and asides (tags and landmark
  roles; a header or footer inside an ``<article>`` or ``<main>`` is content), and elements
  whose class or id names boilerplate as a word (``cookie-banner``, ``share``, ``related``,
  ``sidebar``, ``comments``...) unless it also names content (``post-content``). Each only
  while it holds under ``WRAPPER_SHARE`` of the page's text: broken markup leaves a button or
  a header open around the whole page, and streamed server rendering keeps the page hidden
  until a script moves it into place.
"""

from __future__ import annotations

import re
from typing import Any

from lxml import etree  # type: ignore[import-untyped]

from .survey import Survey, drop

NEVER_CONTENT = (
    "script", "style", "template", "svg", "math", "iframe", "object", "embed", "canvas",
    "head", "link", "meta", "input", "textarea",
)  # fmt: skip
CONTROLS = frozenset({"button", "select", "option", "datalist", "dialog"})
CHROME = frozenset({"nav", "aside", "menu"})
PAGE_CHROME = frozenset({"header", "footer"})  # chrome unless inside an article or main
CHROME_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "complementary", "dialog", "alertdialog"}
    | {"menu", "menubar", "search", "toolbar"}
)
WRAPPER_SHARE = 0.4
NOSCRIPT_TEXT = 200  # a <noscript> with this much text is content for readers without scripts

# Words of a class or id (split at anything not a letter or digit) that name boilerplate.
BOILERPLATE_WORDS = (
    "cookie", "cookies", "consent", "gdpr", "newsletter", "subscribe", "signup", "share",
    "sharing", "social", "breadcrumb", "breadcrumbs", "pagination", "pager", "sidebar",
    "related", "recommended", "recommendations", "promo", "promotion", "advert",
    "advertisement", "ads", "ad", "sponsor", "sponsored", "popup", "modal", "navbar", "nav",
    "navigation", "menu", "footer", "masthead", "header", "toolbar", "outbrain", "taboola",
)  # fmt: skip
BOILERPLATE_NAMES = re.compile(
    r"(?:^|[^a-z0-9])(" + "|".join(BOILERPLATE_WORDS) + r")(?:$|[^a-z0-9])"
)
# Words that name comments: boilerplate under an article, the content of a discussion.
COMMENT_NAMES = re.compile(
    r"(?:^|[^a-z0-9])(comments|comment|respond|disqus|replies)(?:$|[^a-z0-9])"
)

# Words that say an element is content even when it also names boilerplate.
CONTENT_NAMES = re.compile(
    r"(?:^|[^a-z0-9])(content|article|main|body|post|entry|story|text)(?:$|[^a-z0-9])"
)
_HIDING_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)


def strip_never_content(doc: Any) -> None:
    """Remove what no reader reads (their tails kept), in one pass of lxml's."""
    etree.strip_elements(
        doc, *NEVER_CONTENT, etree.Comment, etree.ProcessingInstruction, with_tail=False
    )


def open_noscripts(body: Any) -> None:
    """A ``<noscript>`` with real text becomes part of the page; others go."""
    for element in list(body.iter("noscript")):
        if len("".join(element.itertext()).strip()) >= NOSCRIPT_TEXT:
            element.drop_tag()
        else:
            drop([element])


def remove_boilerplate(body: Any, survey: Survey, *, discussion: bool) -> None:
    """Remove chrome and named boilerplate, then controls and hidden elements, each while it
    holds under ``WRAPPER_SHARE`` of the prose left on the page (the hidden ones measured once
    the chrome is gone: a page hiding its content until a script shows it may have menus
    larger than that content)."""
    survey.forget(_outermost(body, survey, _is_chrome))
    comments = _outermost(body, survey, _is_comments)
    said = sum(survey.prose(c) for c in comments)
    if not discussion or said < survey.prose(body) - said:
        survey.forget(comments)
    survey.forget(_outermost(body, survey, _is_hidden))


def _outermost(body: Any, survey: Survey, test: Any) -> list[Any]:
    total = survey.prose(body)
    chosen: list[Any] = []
    inside: set[Any] = set()
    for element in body.iter():
        tag = element.tag
        if not isinstance(tag, str) or element is body:
            continue
        if element.getparent() in inside:
            inside.add(element)
            continue
        share = test(element, tag)
        if share and survey.prose(element) < share * total:
            chosen.append(element)
            inside.add(element)
    return chosen


def _is_hidden(element: Any, tag: str) -> float:
    if tag in CONTROLS:
        return WRAPPER_SHARE
    get = element.get
    if get("hidden") is not None or get("aria-hidden") == "true":
        return WRAPPER_SHARE
    style = get("style")
    return WRAPPER_SHARE if style and _HIDING_STYLE.search(style) else 0.0


def _is_comments(element: Any, tag: str) -> float:
    names = (element.get("class") or "") + " " + (element.get("id") or "")
    if names == " ":
        return 0.0
    names = names.lower()
    if COMMENT_NAMES.search(names) and not CONTENT_NAMES.search(names):
        return 1.0
    return 0.0


def _is_chrome(element: Any, tag: str) -> float:
    if tag in CHROME:
        return WRAPPER_SHARE
    get = element.get
    if tag in PAGE_CHROME and not any(
        a.tag in ("article", "main") for a in element.iterancestors()
    ):
        return WRAPPER_SHARE
    role = get("role")
    if role and role in CHROME_ROLES:
        return WRAPPER_SHARE
    names = (get("class") or "") + " " + (get("id") or "")
    if names != " ":
        names = names.lower()
        if BOILERPLATE_NAMES.search(names) and not CONTENT_NAMES.search(names):
            return WRAPPER_SHARE
    return 0.0
