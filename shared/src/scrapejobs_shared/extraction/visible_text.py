"""The text a reader sees in an element or a page, from the parsed (lxml) tree.

Not visible, so skipped with their whole subtree: ``script``, ``style``, ``noscript``,
``template``, ``head`` (so ``title``), ``iframe``/``object`` fallback content, ``svg`` and
``math`` markup, and any element with the ``hidden`` attribute. Comments and processing
instructions are skipped (their tail text is kept). CSS is not evaluated, so elements
hidden by a stylesheet still count.

Whitespace is normalised: runs of whitespace (non-breaking spaces included) become one
space. :func:`element_text` gives one line (block boundaries become spaces, so
``<p>a</p><p>b</p>`` reads ``"a b"``, not ``"ab"``); :func:`page_text` separates block
elements (paragraphs, headings, list items, table rows, ``<br>``...) with newlines (table cells with
a space) and drops empty lines.

The element asked for always counts, even when it is one of the hidden kinds: a field
selecting ``title`` or ``script[type="application/ld+json"]`` gets its text; only what is
*inside* it is filtered.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

HIDDEN_TAGS = frozenset(
    {"script", "style", "noscript", "template", "head", "title", "iframe", "object", "svg",
     "math"}
)  # fmt: skip
BLOCK_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "br", "caption", "dd", "details",
        "dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
        "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "li", "main", "nav",
        "ol", "option", "p", "pre", "section", "summary", "table", "tbody", "tfoot",
        "thead", "tr", "ul", "body", "html", "legend", "menu", "center",
    }
)  # fmt: skip
# Table cells sit side by side: a space keeps "<td>1</td><td>2</td>" from reading "12".
CELL_TAGS = frozenset({"td", "th"})
_BREAK = "\n"
SHELL_TEXT_CHARS = 32  # an app shell's own text at most ("Loading…", "Please wait")
# What a reader sees without any text: a page of only these is not empty
MEDIA_TAGS = frozenset({"img", "picture", "video", "audio", "iframe", "embed", "object", "canvas"})


def element_text(element: Any) -> str:
    """The visible text of an lxml element on one line, whitespace normalised."""
    if len(element) == 0:  # a leaf: the common case for field values
        text = element.text
        return " ".join(text.split()) if text else ""
    return " ".join("".join(_text_parts(element, " ")).split())


def page_text(element: Any) -> str:
    """The visible text under an lxml element, one line per block, whitespace normalised."""
    lines = "".join(_text_parts(element, _BREAK)).split(_BREAK)
    return _BREAK.join(normalised for line in lines if (normalised := " ".join(line.split())))


def xml_text(element: Any, separator: str = _BREAK) -> str:
    """The text of an XML element: text nodes joined by ``separator``, whitespace normalised.

    XML has no rendering, so nothing is hidden and there are no inline elements: each
    text node stands on its own (one per line by default).
    """
    return separator.join(
        normalised for text in element.itertext() if (normalised := " ".join(text.split()))
    )


def shows_nothing(root: Any) -> bool:
    """Whether the page's body shows nothing a reader came for: no image, video or frame, and
    no visible text, or at most ``SHELL_TEXT_CHARS`` of it ("loading…") beside scripts that
    would build the rest (an app shell). Stops at the first thing that shows, so an ordinary
    page costs a few elements."""
    body = root.find("body")
    if body is None:
        return True
    seen = 0

    def counted(text: str | None) -> bool:
        nonlocal seen
        if text and not text.isspace():
            seen += len(text.strip())
        return seen > SHELL_TEXT_CHARS

    if counted(body.text):
        return False
    stack = [iter(body)]  # children one at a time: a long page is never listed whole
    while stack:
        element = next(stack[-1], None)
        if element is None:
            stack.pop()
            continue
        if element.tag in MEDIA_TAGS or counted(element.tail):
            return False
        if _is_visible(element):
            if counted(element.text):
                return False
            stack.append(iter(element))
    return seen == 0 or root.find(".//script") is not None


def _is_visible(element: Any) -> bool:
    tag = element.tag
    return isinstance(tag, str) and tag not in HIDDEN_TAGS and element.get("hidden") is None


def _text_parts(root: Any, block_separator: str) -> Iterator[str]:
    """Text pieces in document order, with ``block_separator`` around block elements.

    Iterative (an explicit stack), since parsed documents can nest deeper than Python's
    recursion limit.
    """
    if root.text:
        yield root.text
    stack = [iter(root)]
    parents = [root]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
            ended = parents.pop()
            if stack:
                yield from _closing(ended, block_separator)
            continue
        if not _is_visible(child):
            if child.tail:
                yield child.tail
            continue
        if separator := _separator(child.tag, block_separator):
            yield separator
        if child.text:
            yield child.text
        stack.append(iter(child))
        parents.append(child)


def _separator(tag: Any, block_separator: str) -> str:
    """What stands around an element of ``tag``: blocks apart, table cells a space apart."""
    if tag in BLOCK_TAGS:
        return block_separator
    return " " if tag in CELL_TAGS else ""


def _closing(element: Any, block_separator: str) -> Iterator[str]:
    """After an element's content: its separator, then its tail."""
    if separator := _separator(element.tag, block_separator):
        yield separator
    if element.tail:
        yield element.tail
