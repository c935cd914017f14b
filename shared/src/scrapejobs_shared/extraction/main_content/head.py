"""The content's head: what a reader needs above the content the earlier steps chose, which
the public benchmarks leave out of their answers (bench/README.md, "Main content").

* :func:`widened`: when the page's title heading (:mod:`.title`) is outside the chosen
  content, the content widens to the nearest element holding both when that adds a
  headline's worth of text (``HEADLINE_TEXT``), or at most ``WIDEN_TEXT`` characters on a
  page with facts beside its title (a price named there, or a product, job or event the page
  declares: a product's name, price, stock and SKU beside its description and specs); the
  links left alone on a line in what it adds (``Back to results``, ``Report this job``) go.
  Otherwise the title's own block (the largest holding it in at most ``HEADER_TEXT``
  characters, not reaching the content) is put above the content, with only the title and
  its byline and date (a ``<time>``, an author, a class naming either) left in it: a kicker,
  a standfirst and a share bar go, as the public benchmarks' answers leave them out.
* :func:`headed`: the content under its head: that block, or the document's title as a
  heading when the page has no title heading; then the facts the page declares
  (:mod:`.declared`) that the content does not show.
"""

from __future__ import annotations

import re
from typing import Any

from lxml import etree  # type: ignore[import-untyped]

from .fact import Fact, Shown
from .survey import Survey, drop

WIDEN_TEXT = 400
HEADLINE_TEXT = 50
HEADER_TEXT = 250
BYLINE_TEXT = 100
OPENING_TEXT = 300  # the document's title is not put above content opening with it
TITLED_TEXT = 60  # nor above content shorter than a sentence (a page of chrome)
LONE_LINK_TEXT = 40  # a line that is one link this short, in what a widening adds, goes
HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_BLOCKS = frozenset({"div", "p", "li", "ul", "ol", "section"})
_LINES = _BLOCKS | HEADINGS | {"br", "table", "figure", "form", "header", "footer", "article"}


def widened(
    container: Any, title: Any | None, survey: Survey, body: Any, *, facts: bool
) -> tuple[Any, Any]:
    """The content (``container`` or an ancestor holding the ``title`` heading too) and the
    block to put above it (None when the content holds the title, or there is none).
    ``facts``: whether the page declares a product, a job or an event (then, or when a price
    sits beside the title, the head holds facts worth widening for)."""
    if title is None or not _under(title, body) or _under(title, container):
        return container, None
    holders = set(title.iterancestors())
    common = next((a for a in container.iterancestors() if a in holders), None)
    if common is None or common is body or common.tag in ("body", "html"):
        return container, _block(title, common, survey)
    extra = survey.text(common) - survey.text(container)
    if extra <= HEADLINE_TEXT or (extra <= WIDEN_TEXT and (facts or _priced(common, container))):
        drop(_lone_links(common, container, survey))
        return common, None
    return container, _block(title, common, survey)


def headed(
    container: Any, block: Any | None, title: str, facts: tuple[Fact, ...], heading: Any | None
) -> Any:
    """``container`` under its head: ``block`` (the title heading's, moved out of the page),
    or ``title`` (the document's) as a heading when the page has no title ``heading`` and the
    content, a sentence at least, neither starts with a heading nor opens with those words;
    then the ``facts`` the content does not show, after the head (or after the title heading
    when the content holds it)."""
    head: list[Any] = []
    if block is not None:
        block.tail = None
        head.append(block)
    elif heading is None and title:
        opening = _opening(container)
        if (
            len(opening) >= TITLED_TEXT
            and not _starts_with_heading(container)
            and _words(title) not in opening
        ):
            made = etree.Element("h1")
            made.text = title
            head.append(made)
    if heading is not None:
        _drop_echo(heading)
    missing = _missing(facts, head, container)
    if missing:
        listed = _listed(missing)
        if not head and heading is not None and _under(heading, container):
            listed.tail, heading.tail = heading.tail, None
            heading.addnext(listed)
        else:
            head.append(listed)
    if not head:
        return container
    wrapper = etree.Element("div")
    for part in head:
        wrapper.append(part)
    wrapper.append(container)
    return wrapper


def _missing(facts: tuple[Fact, ...], head: list[Any], container: Any) -> list[Fact]:
    """The ``facts`` neither the head nor the content shows."""
    if not facts:
        return []
    text = " ".join(" ".join(part.itertext()) for part in (*head, container))
    shown = " ".join(text.casefold().split())
    return [fact for fact in facts if not _holds(shown, fact)]


def _drop_echo(heading: Any) -> None:
    """Remove what repeats the title ``heading`` right after it (a theme's second copy of a
    product's name, for its quick view)."""
    echo = heading.getnext()
    if echo is not None and _words("".join(echo.itertext())) == _words("".join(heading.itertext())):
        drop([echo])


def _listed(facts: list[Fact]) -> Any:
    listed = etree.Element("ul")
    for fact in facts:
        item = etree.SubElement(listed, "li")
        label = etree.SubElement(item, "strong")
        label.text = f"{fact.label}:"
        label.tail = f" {fact.value}"
    return listed


def _under(element: Any, top: Any) -> bool:
    return element is top or any(a is top for a in element.iterancestors())


def _priced(common: Any, container: Any) -> bool:
    """Whether ``common`` names a price outside ``container`` (a class or id holding
    ``price``, a microdata or RDFa ``price``): only what lies beside the way down to the
    container is looked at."""
    node = container
    while node is not common:
        parent = node.getparent()
        for sibling in parent.iterchildren(etree.Element):
            if sibling is not node and _PRICES(sibling):
                return True
        node = parent
    return False


_PRICES = etree.XPath(
    "boolean(descendant-or-self::*[contains(@class, 'price') or contains(@class, 'Price')"
    " or contains(@id, 'price') or @itemprop='price' or @property='price'"
    " or @property='schema:price'])",
    smart_strings=False,
)


def _block(title: Any, common: Any | None, survey: Survey) -> Any:
    """The largest element holding ``title`` in at most ``HEADER_TEXT`` characters (not
    reaching ``common``), with only the title and its byline and date left in it."""
    block = title
    for parent in title.iterancestors():
        if parent is common or survey.text(parent) > HEADER_TEXT:
            break
        block = parent
    if block is not title:
        drop(_beside_byline(block, title, survey))
    return block


def _beside_byline(block: Any, title: Any, survey: Survey) -> list[Any]:
    """The parts of ``block`` that are neither the title (nor hold it) nor a byline or date
    (a kicker, a standfirst, a share bar)."""
    keep = {title, *title.iterancestors()}
    found = []
    pending = list(block.iterchildren(etree.Element))
    while pending:
        element = pending.pop()
        if element in keep:
            pending.extend(element.iterchildren(etree.Element))
        elif survey.text(element) > BYLINE_TEXT or not _BYLINE(element):
            found.append(element)
    return found


# A byline or a date: a <time>, an author link or property, or a class or id naming one.
_NAMES = "translate(concat(@class, ' ', @id), 'ABDEHILNORTUY', 'abdehilnortuy')"
_BYLINE = etree.XPath(
    "boolean(descendant-or-self::*[self::time or @datetime or @rel='author'"
    " or @itemprop='author' or @itemprop='datePublished' or "
    + " or ".join(f"contains({_NAMES}, '{word}')" for word in ("author", "byline", "date"))
    + "])",
    smart_strings=False,
)


def _lone_links(common: Any, container: Any, survey: Survey) -> list[Any]:
    """The links of ``common`` outside ``container`` standing alone on a line, short (a back
    link, a report link), with the blocks holding nothing else; never a heading's."""
    found = []
    for link in common.iter("a"):
        text = survey.text(link)
        if not 0 < text <= LONE_LINK_TEXT or _under(link, container):
            continue
        line = link
        for parent in link.iterancestors():
            if parent.tag in HEADINGS:
                line = None
                break
            if parent is common or survey.text(parent) != text:
                break
            line = parent
        if line is not None and (line.tag in _BLOCKS or _own_line(line)):
            found.append(line)
    return found


def _own_line(element: Any) -> bool:
    """Whether ``element`` (inline) stands between blocks, with no text beside it."""
    if element.tail and element.tail.strip():
        return False
    previous = element.getprevious()
    if previous is None:
        parent = element.getparent()
        if parent is None or (parent.text and parent.text.strip()):
            return False
    elif previous.tag not in _LINES or (previous.tail and previous.tail.strip()):
        return False
    following = element.getnext()
    return following is None or following.tag in _LINES


def _opening(container: Any) -> str:
    """The words the content starts with (``OPENING_TEXT`` characters of them)."""
    text: list[str] = []
    size = 0
    for piece in container.itertext():
        text.append(piece)
        size += len(piece)
        if size >= OPENING_TEXT:
            break
    return _words("".join(text))


def _words(text: str) -> str:
    return " ".join(_WORD.findall(text.casefold()))


def _starts_with_heading(container: Any) -> bool:
    for element in container.iter(etree.Element):
        if element.tag in HEADINGS:
            return True
        if element.text and element.text.strip():
            return False
    return False


_WORD = re.compile(r"\w+")
_NUMBERS = re.compile(r"\d[\d,.]*\d|\d")


def _holds(shown: str, fact: Fact) -> bool:
    """Whether the content (``shown``: its text, casefolded) shows ``fact`` already."""
    numbers = _NUMBERS.findall(fact.value)
    if fact.shown is Shown.NUMBERS and numbers:
        plain = shown.replace(",", "")
        return all(n.replace(",", "") in plain for n in numbers)
    value = fact.value.casefold()
    if fact.shown is Shown.PLACE:
        value = value.split(",")[0].split(";")[0].strip()
    return value in shown
