"""Which element holds a page's content, once the boilerplate is gone.

:func:`container_of` starts where the page says its content is (:class:`Anchors`, seen by the
walk that removed the boilerplate: schema.org's ``articleBody``, ``<article>``, ``<main>``, a
content class or id; one of a kind, or one ``ANCHOR_LEAD`` times the prose of the next) when
it holds at least ``ANCHOR_SHARE`` of the page's prose (an ``<article>`` holding articles beside
another is a feed of teasers: left out, its prose too), else at the body; then goes down into
the child holding ``DOMINANT_SHARE`` of the prose while one does (never into a paragraph, a
heading or a link: when one of those holds a fair share, the content starts there).
:func:`focus` narrows that to the element holding ``FOCUS_SHARE`` of its paragraphs, when it is
written in paragraphs; :func:`link_blocks` finds the blocks made of links inside it (a block
holding a paragraph of prose is a section of the content, however many links it lists; a
block of links within the page, ``Jump to recipe``, is one too), and
:func:`repeated_parts` the parts repeating an earlier one word for word; :func:`listing_of`
widens a listing's head (its name and a short description) to the cards below it.
"""

from __future__ import annotations

from typing import Any

from lxml import etree  # type: ignore[import-untyped]

from .boilerplate import VERBATIM
from .survey import Survey

ANCHOR_SHARE = 0.25
ANCHOR_LEAD = 5.0  # how much larger than the next the largest of several anchors must be
DOMINANT_SHARE = 0.75
LEAF_SHARE = 0.25  # a non-container child with this share of the prose ends the descent
# What the container may be.
CONTAINERS = frozenset(
    {"div", "section", "main", "article", "form", "center", "table", "tbody", "tr", "td"}
    | {"ul", "ol", "dl", "font", "span", "body", "html"}
)
LINK_BLOCKS = frozenset({"div", "section", "ul", "ol", "table", "p", "dl", "span"})
LINK_BLOCK_SHARE = 0.6  # of a block's text inside links
LINK_BLOCK_LINKS = 3
REPEATED_TEXT = 100  # a part of this many characters met again is a copy
FOCUS_SHARE = 0.9  # of the container's paragraphs the focus must hold
FOCUS_MIN = 500  # characters of paragraphs a container needs for a focus
FOCUS_PROSE = 0.3  # of the container's prose its paragraphs must be for a focus
HEAD_TEXT = 400  # a container this short holding the page's title may be a listing's head
LISTING_UP = 4
LISTING_CARDS = 3


CONTENT_CLASSES = (
    "entry-content", "post-content", "article-body", "article-content", "story-body",
    "post-body",
)  # fmt: skip
CONTENT_IDS = ("content", "main-content", "article-body")


class Anchors:
    """The elements a walk of the page saw naming themselves content, by kind, most telling
    kind first (schema.org's ``articleBody``; ``<article>``; ``<main>`` or the ``main`` role;
    a content class or id)."""

    def __init__(self) -> None:
        self.kinds: tuple[list[Any], ...] = ([], [], [], [])
        self._content_named: dict[str, bool] = {}

    def see(self, element: Any, names: str) -> None:
        """Note ``element`` if it is an anchor (``names``: its class and id, lowercased)."""
        tag = element.tag
        get = element.get
        if get("itemprop") == "articleBody":
            self.kinds[0].append(element)
        elif tag == "article":
            self.kinds[1].append(element)
        elif tag == "main" or get("role") == "main":
            self.kinds[2].append(element)
        elif names != " ":
            content = self._content_named.get(names)
            if content is None:
                content = self._content_named[names] = not _CONTENT_NAMES.isdisjoint(names.split())
            if content:
                self.kinds[3].append(element)


_CONTENT_NAMES = frozenset(CONTENT_CLASSES) | frozenset(CONTENT_IDS)


def container_of(body: Any, survey: Survey, anchors: Anchors) -> Any:
    """The element holding ``body``'s content (see the module's docstring); ``anchors``: what
    the walk removing boilerplate saw (some may have gone since)."""
    node = _anchor(body, survey, anchors)
    while True:
        own = survey.prose(node)
        best, best_prose = None, -1.0
        for child in node:
            if not isinstance(child.tag, str):
                continue
            prose = survey.prose(child)
            if child.tag not in CONTAINERS:
                if prose > LEAF_SHARE * own:
                    return node
                continue
            if prose > best_prose:
                best, best_prose = child, prose
        if best is None or best_prose < DOMINANT_SHARE * own:
            return node
        node = best


def focus(container: Any, survey: Survey) -> Any:
    """Inside ``container``, the smallest element holding nearly all its paragraphs, when
    paragraphs are what it is written in (an article among teasers and lists)."""
    total = survey.paragraphs(container)
    if total < FOCUS_MIN or total < FOCUS_PROSE * survey.prose(container):
        return container
    node = container
    while True:
        for child in node:
            if child.tag in CONTAINERS and survey.paragraphs(child) >= FOCUS_SHARE * total:
                node = child
                break
        else:
            return node


def _anchor(body: Any, survey: Survey, anchors: Anchors) -> Any:
    for kind in anchors.kinds:
        total = survey.prose(body)
        found = _outermost([e for e in kind if survey.prose(e) > 0 and _attached(e, body)])
        feeds = [e for e in found if e.tag == "article" and e.find(".//article") is not None]
        if feeds and len(feeds) < len(found):
            # Articles holding articles (a "you may also like" feed) beside an article: the
            # article is measured against the page without them.
            found = [e for e in found if e not in feeds]
            total -= sum(survey.prose(e) for e in feeds)
        if not found:
            continue
        found.sort(key=survey.prose, reverse=True)
        first = survey.prose(found[0])
        second = survey.prose(found[1]) if len(found) > 1 else 0.0
        # One of them, or one far larger than the rest (an article among teaser cards).
        if first >= ANCHOR_SHARE * total and first >= ANCHOR_LEAD * second:
            return found[0]
    return body


def _attached(element: Any, body: Any) -> bool:
    """Whether ``element`` is still under ``body`` (not removed with what held it)."""
    return any(a is body for a in element.iterancestors())


def _outermost(elements: list[Any]) -> list[Any]:
    chosen = set(elements)
    return [e for e in elements if not any(a in chosen for a in e.iterancestors())]


def link_blocks(container: Any, survey: Survey) -> list[Any]:
    """The outermost blocks inside ``container`` whose text is mostly links."""
    found: list[Any] = []
    pending = [c for c in container.iterchildren(etree.Element)]
    pending.reverse()
    while pending:  # depth first, in document order, not below a block found
        element = pending.pop()
        text = survey.text(element)
        if not text:
            continue
        links = survey.links(element)
        if (
            element.tag in LINK_BLOCKS
            and not survey.paragraphs(element)
            and (
                (links > LINK_BLOCK_SHARE * text and survey.anchors(element) >= LINK_BLOCK_LINKS)
                or (links == text and _jumps(element))
            )
        ):
            found.append(element)
            continue
        children = list(element.iterchildren(etree.Element))
        children.reverse()
        pending.extend(children)
    return found


def _jumps(element: Any) -> bool:
    """Whether ``element`` links within the page (``Jump to recipe``, ``Skip to content``)."""
    return any(len(h) > 1 and h.startswith("#") for h in _HREFS(element))


_HREFS = etree.XPath("descendant-or-self::a/@href", smart_strings=False)


def listing_of(container: Any, title: Any | None, survey: Survey) -> Any | None:
    """When ``container`` is only a head (the ``title`` heading and a short description, no
    paragraph of prose), its nearest ancestor, ``LISTING_UP`` steps up at most, whose other
    children hold a list of cards (``LISTING_CARDS`` children alike in tag and class, each with
    a link): a category page's products below its name. Else None."""
    if title is None or survey.text(container) > HEAD_TEXT or survey.paragraphs(container):
        return None
    if title is not container and not any(a is container for a in title.iterancestors()):
        return None
    node = container
    for _ in range(LISTING_UP):
        parent = node.getparent()
        if parent is None or parent.tag in ("body", "html"):
            break
        if any(c is not node and _cards(c, survey) for c in parent.iterchildren(etree.Element)):
            return parent
        node = parent
    return None


def _cards(top: Any, survey: Survey) -> bool:
    """Whether ``top`` holds a list of cards: ``LISTING_CARDS`` children of one element alike
    in tag and class, each holding a link with text."""
    for element in top.iter(etree.Element):
        if len(element) < LISTING_CARDS:
            continue
        alike: dict[tuple[str, str], int] = {}
        for child in element.iterchildren(etree.Element):
            if survey.links(child) > 0:
                key = (child.tag, child.get("class") or "")
                alike[key] = alike.get(key, 0) + 1
        if alike and max(alike.values()) >= LISTING_CARDS:
            return True
    return False


def repeated_parts(container: Any, survey: Survey) -> list[Any]:
    """The outermost parts (elements of two children or more) inside ``container`` repeating
    an earlier part's text word for word: a page serving its article twice, a sign-up box in every
    section. (A paragraph alone may repeat: a meal plan's days, an interview's questions.)"""
    by_size: dict[tuple[int, int, int], list[Any]] = {}
    for element in container.iterdescendants(etree.Element):
        text = survey.text(element)
        if text >= REPEATED_TEXT and len(element) >= 2 and element.tag not in VERBATIM:
            size = (text, survey.links(element), survey.anchors(element))
            by_size.setdefault(size, []).append(element)
    found: list[Any] = []
    for same_size in by_size.values():
        if len(same_size) < 2:
            continue
        seen: dict[str, Any] = {}
        for element in same_size:
            first = seen.setdefault("".join(element.itertext()), element)
            if first is not element and not any(a is first for a in element.iterancestors()):
                found.append(element)
    chosen = set(found)
    return [e for e in found if not any(a in chosen for a in e.iterancestors())]
