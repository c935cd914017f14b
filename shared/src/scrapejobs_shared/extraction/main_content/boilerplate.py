"""What is never a page's content: what no reader reads, and the page's chrome.

* :func:`place_streamed`: first, segments a streamed server rendering sent late (hidden, at the
  end of the body) are put where its script would put them.
* :func:`strip_never_content`: scripts, styles, templates, embedded objects and frames, the
  head, text inputs and selects (their options), comments: always.
* :func:`remove_boilerplate`: the page's navigation, banner, footer and asides (tags and
  landmark roles; a header or footer inside an ``<article>`` or ``<main>`` is content),
  elements whose class or id names boilerplate as a word (``cookie-banner``, ``share``,
  ``related``, ``sidebar``...) unless it also names content (``post-content``), comments
  (``comments``, ``respond``, ``disqus``...) unless the page is a discussion, form controls
  and hidden elements (``hidden``, ``display: none``; ``aria-hidden`` hides from screen
  readers alone, so it stays, while text for screen readers alone, ``sr-only`` or
  ``visually-hidden``, goes; a panel a control on the page opens stays: an accordion's, a
  tab's, named by ``aria-controls`` or ``role="tabpanel"``). Each only while it holds under
  ``WRAPPER_SHARE`` of the page's prose: broken markup leaves a button or a header open
  around the whole page, and streamed server rendering keeps the page hidden until a script
  moves it into place. A dialog over the page (``role="dialog"``, ``aria-modal``) goes
  whatever it holds: a privacy policy in a modal may outweigh a product grid.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from typing import Any

from lxml import etree  # type: ignore[import-untyped]

from .page_kind import PageKind
from .survey import Survey, drop

NEVER_CONTENT = (
    "script", "style", "template", "svg", "math", "iframe", "object", "embed", "canvas",
    "head", "link", "meta", "input", "textarea", "select", "datalist",
)  # fmt: skip
CONTROLS = frozenset({"button", "option", "dialog", "label"})
# Code, kept whole: a highlighter's classes (``hljs-comment``) name what is inside it.
VERBATIM = frozenset({"pre", "code"})
CHROME = frozenset({"nav", "aside", "menu"})
PAGE_CHROME = frozenset({"header", "footer"})  # chrome unless inside an article or main
CHROME_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "complementary", "dialog", "alertdialog"}
    | {"menu", "menubar", "search", "toolbar"}
)
DIALOG_ROLES = frozenset({"dialog", "alertdialog"})  # over the page: never its wrapper
WRAPPER_SHARE = 0.4
# An element saying only this is an ad's label (the ad itself is a script or a frame).
AD_LABELS = frozenset(
    {"advertisement", "advert", "advertising", "ad", "ads", "anzeige", "werbung", "publicidad"}
    | {"publicidade", "publicité", "pubblicità", "reklama", "sponsored", "reclame"}
)
AD_LABEL_SPACED = max(len(label) for label in AD_LABELS) + 40  # with spacing around it
NOSCRIPT_TEXT = 200  # a <noscript> with this much text is content for readers without scripts

# Words of a class or id (split at anything not a letter or digit) that name boilerplate.
BOILERPLATE_WORDS = (
    "cookie", "cookies", "consent", "gdpr", "newsletter", "subscribe", "signup", "share",
    "sharing", "social", "breadcrumb", "breadcrumbs", "pagination", "pager", "sidebar",
    "related", "recommended", "recommendations", "promo", "promotion", "advert",
    "advertisement", "ads", "sponsor", "sponsored", "popup", "modal", "navbar", "nav",
    "navigation", "menu", "footer", "masthead", "header", "toolbar", "outbrain", "taboola",
    "gallery", "slideshow", "carousel", "caption", "credit", "signature", "avatar", "badges",
    "vote", "votes", "reputation", "userextras", "usertitle", "userbanner", "reactions",
    "ipsreact", "upsell", "upsells", "crosssell", "crosssells", "button", "buttons",
    "online", "onlinenow",
)  # fmt: skip
# A boilerplate word ending a class or id after ``-`` or ``_`` (``post-menu``, ``entry-footer``)
# names boilerplate of the content named before it, whatever else the element is named.
BOILERPLATE = frozenset(BOILERPLATE_WORDS)
# "ad" names an ad as a class's first word (``ad-slot``), not as a modifier's last
# (``hide-read-more-ad``).
AD = "ad"
# Classes of text for screen readers alone, out of sight (the mirror of ``aria-hidden``).
SCREEN_READER_NAMES = re.compile(
    r"sr-only|sr_only|visually-hidden|visuallyhidden|screen-reader|element-invisible"
)
# Words that name comments: boilerplate under an article, the content of a discussion.
COMMENT_WORDS = frozenset({"comments", "comment", "respond", "disqus", "replies"})
# On a product's page, its reviews too.
REVIEWED_WORDS = COMMENT_WORDS | {"reviews", "review"}
# Words that say an element is content even when it also names boilerplate.
CONTENT_WORDS = frozenset({"content", "article", "main", "body", "post", "entry", "story", "text"})
_WORD = re.compile(r"[a-z0-9]+")
_HIDING_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)


_PLACEHOLDERS = etree.XPath(
    "descendant::template[starts-with(@id, 'B:') or starts-with(@id, 'P:')]", smart_strings=False
)
_SEGMENTS = etree.XPath("descendant::*[@hidden and starts-with(@id, 'S:')]", smart_strings=False)


def place_streamed(doc: Any) -> None:
    """Put the segments a streamed server rendering sent late (React's ``<div hidden
    id="S:n">``, moved by its script into ``<template id="B:n">`` or ``"P:n"`` where they
    belong) in their places, as a browser running the page's scripts would."""
    placeholders = {t.get("id"): t for t in _PLACEHOLDERS(doc)}
    if not placeholders:
        return
    for segment in _SEGMENTS(doc):
        number = segment.get("id")[2:]
        placeholder = placeholders.get("B:" + number)
        if placeholder is None:
            placeholder = placeholders.get("P:" + number)
        parent = None if placeholder is None else placeholder.getparent()
        if parent is None:
            continue
        at = parent.index(placeholder)
        parent[at : at + 1] = list(segment)  # the placeholder's tail goes with it: empty
        drop([segment])


def strip_never_content(doc: Any) -> None:
    """Remove what no reader reads (their tails kept), in one pass of lxml's."""
    etree.strip_elements(
        doc, *NEVER_CONTENT, etree.Comment, etree.ProcessingInstruction, with_tail=False
    )


def open_noscripts(body: Any) -> None:
    """A ``<noscript>`` with real text becomes part of the page; others go."""
    short = [
        element
        for element in body.iter("noscript")
        if len("".join(element.itertext()).strip()) < NOSCRIPT_TEXT
    ]
    drop(short)
    etree.strip_tags(body, "noscript")  # the others' text and children, where they were


def remove_boilerplate(
    body: Any,
    survey: Survey,
    *,
    kind: PageKind,
    noticed: Callable[[Any, str], None],
    keep: frozenset[Any] = frozenset(),
) -> None:
    """Remove chrome and named boilerplate, then comments (unless the page is a discussion
    whose replies outweigh the rest), then controls and hidden elements: each while it holds
    under ``WRAPPER_SHARE`` of the prose (comments: under all of the rest), the comments and
    hidden ones measured against what is left once the chrome is gone (a page hiding its
    content until a script shows it may have menus larger than that content). One walk, which
    shows ``noticed`` each element it keeps (with its class and id, lowercased). Elements in
    ``keep`` (the page's title heading and its ancestors) are never chrome."""
    found = _Found(REVIEWED_WORDS if kind is PageKind.PRODUCT else COMMENT_WORDS, keep)
    found.walk(body, survey, noticed)
    survey.forget(found.chrome)
    survey.forget(_ad_labels(found.ads, body, survey))
    said = sum(survey.prose(c) for c in found.comments)
    left = survey.prose(body)
    # A discussion's replies, or a review page's reviews (its JSON-LD names the product),
    # stay when they outweigh the rest.
    if kind is PageKind.OTHER or said < left - said:
        survey.forget(found.comments)
    elif kind is PageKind.PRODUCT:  # a list of reviews goes however long; a review page stays
        survey.forget(c for c in found.comments if found.nested[c] >= 2 and c.find(".//h1") is None)
    limit = WRAPPER_SHARE * survey.prose(body)
    disclosed = _disclosed(body)
    gone: list[Any] = []
    covered: set[Any] = set()  # going, or inside one that goes
    for element, owner in found.hidden:  # in document order: outer ones first
        if owner in covered:
            covered.add(element)
        elif element.tag not in CONTROLS and (
            element.get("role") == "tabpanel" or element.get("id") in disclosed
        ):
            _show(element)
        elif survey.prose(element) < limit:
            gone.append(element)
            covered.add(element)
        else:  # the page's content, hidden until a script shows it: shown
            _show(element)
    survey.forget(gone)


_CONTROLLED = etree.XPath("descendant::*/@aria-controls", smart_strings=False)


def _disclosed(body: Any) -> set[str]:
    """The ids of what a control left on the page opens (an accordion's panels, a tab's)."""
    return {name for names in _CONTROLLED(body) for name in names.split()}


def _show(element: Any) -> None:
    for attribute in ("hidden", "style"):
        element.attrib.pop(attribute, None)


class _Found:
    """What one walk of the page finds: chrome to remove (under ``WRAPPER_SHARE`` of the
    prose; nothing inside it looked at), the outermost comments, and every hidden element with
    the nearest hidden one it is inside (one too large to go may hold others that go)."""

    def __init__(self, comment_words: frozenset[str], keep: frozenset[Any]) -> None:
        self.comment_words = comment_words
        self.keep = keep
        self.chrome: list[Any] = []
        self.comments: list[Any] = []
        self.hidden: list[tuple[Any, Any]] = []
        self.names: dict[str, _Named] = {}
        self.nested: dict[Any, int] = {}  # comments (or reviews) named inside each
        self.ads: list[Any] = []  # elements without children saying only an ad's label

    def walk(self, body: Any, survey: Survey, noticed: Callable[[Any, str], None]) -> None:
        """Depth first in document order, not into what goes (the page holds elements only:
        :func:`strip_never_content` has run)."""
        limit = WRAPPER_SHARE * survey.prose(body)
        named = self.names
        chrome = self.chrome
        keep = self.keep
        # (element, the nearest hidden element it is inside, the outermost comments it is
        # inside, whether it is inside an article or main)
        pending: list[tuple[Any, Any, Any, bool]] = [(c, None, None, False) for c in body]
        pending.reverse()
        while pending:
            element, hidden, outer, in_article = pending.pop()
            get = element.get
            tag = element.tag
            names = f"{get('class') or ''} {get('id') or ''}".lower()
            said = named.get(names)
            if said is None:  # what the names say, once a page for each distinct pair
                said = named[names] = _named(names, self.comment_words)
            role = get("role")
            if element not in keep and (
                (role in DIALOG_ROLES or get("aria-modal") == "true" or tag == "dialog")
                or (
                    (
                        said is _Named.CHROME
                        or tag in CHROME
                        or (tag in PAGE_CHROME and not in_article)
                        or (role is not None and role in CHROME_ROLES)
                    )
                    and survey.prose(element) < limit
                )
            ):
                chrome.append(element)  # a dialog goes whatever it holds: never a wrapper
                continue
            noticed(element, names)
            if _is_hidden(element):
                self.hidden.append((element, hidden))
                hidden = element
            if said is _Named.COMMENTS:
                outer = self._comments(element, outer)
            if len(element):
                if tag not in VERBATIM:
                    in_article = in_article or tag == "article" or tag == "main"
                    for child in reversed(element):
                        pending.append((child, hidden, outer, in_article))
            elif (
                (text := element.text)
                and len(text) <= AD_LABEL_SPACED
                and text.strip().casefold() in AD_LABELS
            ):
                self.ads.append(element)  # a leaf saying only an ad's label

    def _comments(self, element: Any, outer: Any) -> Any:
        """Note ``element``, named comments, inside the outermost comments ``outer`` (or
        None); the outermost comments it is inside or is."""
        if outer is not None:
            self.nested[outer] += 1
            return outer
        self.comments.append(element)
        self.nested[element] = 0
        return element


def _ad_labels(leaves: list[Any], body: Any, survey: Survey) -> list[Any]:
    """The elements saying only an ad's label (``Advertisement``: ``leaves`` are those without
    children), each the outermost holding no other text."""
    found: dict[Any, None] = {}
    for leaf in leaves:
        element = leaf
        length = survey.text(leaf)
        for parent in leaf.iterancestors():
            if parent is body or survey.text(parent) != length:
                break
            element = parent
        found[element] = None
    return [e for e in found if not any(a in found for a in e.iterancestors())]


def _is_hidden(element: Any) -> bool:
    if element.tag in CONTROLS:
        return True
    get = element.get
    if get("hidden") is not None:
        return True
    style = get("style")
    return bool(style and _HIDING_STYLE.search(style))


class _Named(enum.Enum):
    CHROME = "chrome"
    COMMENTS = "comments"
    NOTHING = "nothing"


def _named(names: str, comment_words: frozenset[str]) -> _Named:
    """What an element's class and id (lowercased, joined by a space) say it is."""
    if names == " ":
        return _Named.NOTHING
    if SCREEN_READER_NAMES.search(names):
        return _Named.CHROME
    words, ending, ad = _words(names)
    if ending:
        return _Named.CHROME
    if not CONTENT_WORDS.isdisjoint(words):
        return _Named.NOTHING
    if ad or not BOILERPLATE.isdisjoint(words):
        return _Named.CHROME
    if not comment_words.isdisjoint(words):
        return _Named.COMMENTS
    return _Named.NOTHING


def _words(names: str) -> tuple[set[str], bool, bool]:
    """The words of ``names`` (runs of letters and digits), whether a class or id ends in a
    boilerplate word after ``-`` or ``_``, and whether one starts with the word ``ad``."""
    words: set[str] = set()
    ending = ad = False
    for token in names.split():
        parts = _WORD.findall(token)
        if not parts:
            continue
        last = parts[-1]
        if (
            last in BOILERPLATE
            and token.endswith(last)
            and len(token) > len(last)
            and token[-len(last) - 1] in "-_"
        ):
            ending = True
        if parts[0] == AD and token.startswith(AD):
            ad = True
        words.update(parts)
    return words, ending, ad
