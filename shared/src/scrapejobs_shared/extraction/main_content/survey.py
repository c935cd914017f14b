"""How much of a page's text each element holds, measured bottom-up in one pass.

For each element: its text length (whitespace at the ends of each text node left out), the
part of it inside links, the number of links, and its **prose**: text outside links, where a
block whose text is short (a menu item, a label, a price) counts for less than a sentence, and
a link's text counts a little (a listing's content is its links). Removing an element
(:meth:`Survey.forget`) takes its measures off its ancestors without measuring again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from lxml import etree  # type: ignore[import-untyped]

# Tags that break text into blocks: an element holding one of them is a container of blocks,
# its prose the sum of theirs; an element holding none is one block.
BLOCK_TAGS = frozenset(
    {"div", "section", "article", "main", "p", "pre", "table", "tr", "td", "th", "ul", "ol"}
    | {"li", "dl", "dd", "dt", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "header"}
    | {"footer", "form", "figure", "nav", "aside", "br"}
)
SENTENCE = 60  # a block of this many characters or more is prose in full
SHORT_WEIGHT = 0.3  # what a shorter block's characters count for
LINK_WEIGHT = 0.1  # what a link's characters count for
PARAGRAPH = 80  # a <p> with this many characters outside links is a paragraph of prose


def _prose(length: int) -> float:
    return float(length) if length >= SENTENCE else length * SHORT_WEIGHT


class Survey:
    """The measures of every element under ``top`` (elements added later measure nothing)."""

    def __init__(self, top: Any) -> None:
        # element → (text, links, anchors, prose, paragraphs, holds blocks)
        self._of: dict[Any, tuple[int, int, int, float, int, bool]] = {}
        # The proxies measured, kept alive so that lxml hands out the same ones again.
        self._elements = elements = list(top.iter(etree.Element))
        of = self._of
        block_tags = BLOCK_TAGS
        for element in reversed(elements):
            tag = element.tag
            own_text = element.text  # (each read makes a new string)
            own = len(own_text.strip()) if own_text else 0
            if tag == "a" or len(element):
                text = own
                links = anchors = paragraphs = 0
                prose = 0.0
                blocks = False
                for child in element:  # elements only: comments are stripped before
                    tail = child.tail
                    if tail:
                        tail_length = len(tail.strip())
                        own += tail_length
                        text += tail_length
                    c_text, c_links, c_anchors, c_prose, c_paragraphs, c_blocks = of[child]
                    text += c_text
                    links += c_links
                    anchors += c_anchors
                    prose += c_prose
                    paragraphs += c_paragraphs
                    if not blocks and (c_blocks or child.tag in block_tags):
                        blocks = True
                if tag == "a":
                    # A teaser's paragraphs, inside its link, are not the page's.
                    of[element] = (text, text, anchors + 1, LINK_WEIGHT * text, 0, blocks)
                    continue
                if tag == "p" and text - links >= PARAGRAPH:
                    paragraphs += text - links
                prose = prose + _prose(own) if blocks else _prose(text - links)
                of[element] = (text, links, anchors, prose, paragraphs, blocks)
            else:  # a leaf
                paragraph = own if tag == "p" and own >= PARAGRAPH else 0
                of[element] = (own, 0, 0, _prose(own), paragraph, False)

    def text(self, element: Any) -> int:
        measures = self._of.get(element)
        return measures[0] if measures else 0

    def links(self, element: Any) -> int:
        """The part of :meth:`text` inside links."""
        measures = self._of.get(element)
        return measures[1] if measures else 0

    def anchors(self, element: Any) -> int:
        """How many links the element holds (itself included)."""
        measures = self._of.get(element)
        return measures[2] if measures else 0

    def prose(self, element: Any) -> float:
        measures = self._of.get(element)
        return measures[3] if measures else 0.0

    def paragraphs(self, element: Any) -> int:
        """The text outside links of the paragraphs (``<p>`` of ``PARAGRAPH`` characters or
        more) the element holds."""
        measures = self._of.get(element)
        return measures[4] if measures else 0

    def forget(self, elements: Iterable[Any]) -> None:
        """Remove each element from the page (none inside another), its measures taken off
        its ancestors."""
        elements = list(elements)
        of = self._of
        for element in elements:
            gone = of.get(element)
            if gone is None:
                continue
            for ancestor in element.iterancestors():
                held = of.get(ancestor)
                if held is None:
                    break
                of[ancestor] = (
                    held[0] - gone[0],
                    held[1] - gone[1],
                    held[2] - gone[2],
                    held[3] - gone[3],
                    held[4] - gone[4],
                    held[5],
                )
        drop(elements)


def drop(elements: Iterable[Any]) -> None:
    """Remove each element, keeping the text that follows it."""
    for element in elements:
        parent = element.getparent()
        if parent is None:
            continue
        tail = element.tail
        if tail:
            previous = element.getprevious()
            if previous is not None:
                previous.tail = _xml_text((previous.tail or "") + tail)
            else:
                parent.text = _xml_text((parent.text or "") + tail)
        parent.remove(element)


# What lxml refuses to set, though its parser keeps it from a page: C0 controls but tab,
# newline and carriage return; lone surrogates; U+FFFE and U+FFFF.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub("", text)
