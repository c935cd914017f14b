"""How much of a page's text each element holds, measured bottom-up in one pass.

For each element: its text length (whitespace at the ends of each text node left out), the
part of it inside links, the number of links, and its **prose**: text outside links, where a
block whose text is short (a menu item, a label, a price) counts for less than a sentence, and
a link's text counts a little (a listing's content is its links). Removing an element
(:meth:`Survey.forget`) takes its measures off its ancestors without measuring again.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

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
        self._text: dict[Any, int] = {}
        self._links: dict[Any, int] = {}
        self._anchors: dict[Any, int] = {}
        self._prose: dict[Any, float] = {}
        self._paragraphs: dict[Any, int] = {}
        # The proxies measured, kept alive so that lxml hands out the same ones again.
        self._elements = elements = [e for e in top.iter() if isinstance(e.tag, str)]
        text_of, links_of, anchors_of, prose_of, paragraphs_of = (
            self._text,
            self._links,
            self._anchors,
            self._prose,
            self._paragraphs,
        )
        blocky: set[Any] = set()
        for element in reversed(elements):
            own = len((element.text or "").strip())
            text = own
            links = anchors = paragraphs = 0
            prose = 0.0
            holds_blocks = False
            for child in element:
                if not isinstance(child.tag, str):
                    continue
                tail = len((child.tail or "").strip())
                own += tail
                text += text_of[child] + tail
                links += links_of[child]
                anchors += anchors_of[child]
                prose += prose_of[child]
                paragraphs += paragraphs_of[child]
                if not holds_blocks and (child.tag in BLOCK_TAGS or child in blocky):
                    holds_blocks = True
            text_of[element] = text
            if element.tag == "a":
                links_of[element] = text
                anchors_of[element] = anchors + 1
                prose_of[element] = LINK_WEIGHT * text
            else:
                links_of[element] = links
                anchors_of[element] = anchors
                prose_of[element] = prose + _prose(own) if holds_blocks else _prose(text - links)
            if element.tag == "a":
                paragraphs = 0  # a teaser's paragraphs, inside its link
            elif element.tag == "p" and text - links >= PARAGRAPH:
                paragraphs += text - links
            paragraphs_of[element] = paragraphs
            if holds_blocks:
                blocky.add(element)

    def text(self, element: Any) -> int:
        return self._text.get(element, 0)

    def links(self, element: Any) -> int:
        """The part of :meth:`text` inside links."""
        return self._links.get(element, 0)

    def anchors(self, element: Any) -> int:
        """How many links the element holds (itself included)."""
        return self._anchors.get(element, 0)

    def prose(self, element: Any) -> float:
        return self._prose.get(element, 0.0)

    def paragraphs(self, element: Any) -> int:
        """The text outside links of the paragraphs (``<p>`` of ``PARAGRAPH`` characters or
        more) the element holds."""
        return self._paragraphs.get(element, 0)

    def forget(self, elements: Iterable[Any]) -> None:
        """Remove each element from the page (none inside another), its measures taken off
        its ancestors."""
        elements = list(elements)
        for element in elements:
            text, links = self.text(element), self.links(element)
            anchors, prose = self.anchors(element), self.prose(element)
            paragraphs = self.paragraphs(element)
            for ancestor in element.iterancestors():
                if ancestor not in self._text:
                    break
                self._text[ancestor] -= text
                self._links[ancestor] -= links
                self._anchors[ancestor] -= anchors
                self._prose[ancestor] -= prose
                self._paragraphs[ancestor] -= paragraphs
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
                previous.tail = (previous.tail or "") + tail
            else:
                parent.text = (parent.text or "") + tail
        parent.remove(element)
