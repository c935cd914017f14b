"""A document's pages as lines of text, each with its size, into markdown: what a PDF's text
layer (pdf.py) and a page read by OCR (ocr.py) both give, read the same way.

Lines are joined into paragraphs (a blank line, or a line much shorter than the page's usual
line, ends one; a word marked :data:`HYPHEN` at a line's end is joined whole), a line clearly
larger than the body's size (the size most of the document's characters have) is a heading
(``#`` for the largest size, down to ``###``), a line starting with a bullet or a number is a
list item, and a table of contents' line (``1 Introduction . . . . 1``) is an entry of its own
without its dot leaders. What a reader does not read is left out: the running headers and
footers a document repeats at the top or the bottom of its pages (its title, "Page 3 of 12")
and bare page numbers there.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from .plain_text import escaped

HEADING_RATIO = 1.15  # a line this much larger than the body's size is a heading
SCANNED_HEADING_RATIO = 1.3  # the same, of lines read by OCR (their heights vary more)
HEADING_LENGTH = 150  # characters: a longer line is not a heading, whatever its size
SHORT_LINE = 0.7  # of the page's usual line length: a shorter line ends its paragraph
HYPHEN = "\ufffe"  # a word hyphenated at a line's end (PDFium's mark, and OCR's)
EDGE_LINES = 2  # lines at a page's top and bottom looked at for running headers and footers
RUNNING = 0.5  # of the pages (and at least three): a line repeated on as many is running
MIN_RUNNING = 2  # pages: a line repeated on every page of a document of two or three runs
RUNNING_LENGTH = 80  # characters: a longer line is text, not a running header or footer
# Bullets: • ◦ ▪ ‣ ● ○ ■ □, an en dash, a hyphen, an asterisk.
_BULLET = re.compile("^\\s*(?:[\u2022\u25e6\u25aa\u2023\u25cf\u25cb\u25a0\u25a1\u2013*-])\\s+")
_NUMBERED = re.compile(r"^\s*(\d{1,3})[.)]\s+")
# a bare page number: "3", "- 3 -", "Page 3", "page 3 of 12", "3 / 12", "iv"
_DASHES = "\\s\\-\u2013\u2014|"  # spaces, a hyphen, an en or em dash, a bar
_ROMAN = r"(?=[ivx])x{0,4}(?:ix|iv|v?i{0,3})"  # front matter's numbers (to 49), no word
_NUMBER = rf"(?:page\s+)?(?:\d{{1,5}}(?:\s*(?:of|/)\s*\d{{1,5}})?|{_ROMAN})"
_PAGE_NUMBER = re.compile(f"^[{_DASHES}]*{_NUMBER}[{_DASHES}]*$", re.IGNORECASE)
# a table of contents' entry: its title, dot leaders (4 dots or more, spaced or not), a page
_LEADERS = re.compile(r"^(?P<title>.*?\S)\s*(?:\.\s*){4,}\s*(?P<page>\d{1,5}|[ivxlcdm]{1,7})\s*$")
_DIGITS = re.compile(r"\d+")
ENTRY_LENGTH = 300  # characters: a longer line is no contents' entry (nor tried as one)


@dataclass(frozen=True, slots=True)
class Line:
    text: str
    size: float  # its font size, or its height on the page's image (0: unknown)


Page = list[Line]


def written_pages(pages: Sequence[Page], scanned: Sequence[bool]) -> list[tuple[str, str]]:
    """Each page's markdown and text, its running lines left out (:func:`without_running_lines`);
    a page's headings by size among the pages of its kind (``scanned``: read by OCR, its sizes
    the lines' heights, which vary more than a text layer's font sizes)."""
    bodies: dict[bool, float] = {}
    levels: dict[bool, dict[float, int]] = {}
    for kind, ratio in ((False, HEADING_RATIO), (True, SCANNED_HEADING_RATIO)):
        alike = [page for page, by_ocr in zip(pages, scanned, strict=True) if by_ocr is kind]
        bodies[kind] = body_size(alike)
        levels[kind] = heading_levels(alike, bodies[kind], ratio)
    kept = without_running_lines(pages, [bodies[by_ocr] for by_ocr in scanned])
    return [
        (page_markdown(lines, levels[by_ocr]), page_text(lines))
        for lines, by_ocr in zip(kept, scanned, strict=True)
    ]


def without_running_lines(pages: Sequence[Page], bodies: Sequence[float]) -> list[Page]:
    """``pages`` without their running headers and footers: a line among a page's first or last
    :data:`EDGE_LINES` that repeats at the edges of every page of a document of two or three,
    of at least half the pages (and three) of a longer one, as it is or, for a line no larger
    than its page's body size (``bodies``; not a heading: "Chapter 2" atop its pages stays),
    its numbers aside ("Report 2024 · page 7"); and bare page numbers at a page's edges (in a
    document of two pages or more)."""
    count = len(pages)
    if count < 2:
        return [list(page) for page in pages]
    shapes = [
        {id(line): _shapes(line, body) for line in _edges(page)}
        for page, body in zip(pages, bodies, strict=True)
    ]
    repeated: Counter[str] = Counter()
    for edges in shapes:
        repeated.update(set().union(*edges.values()))
    # on every page of a short document, on half the pages (and three) of a longer one
    least = count if count <= MIN_RUNNING + 1 else max(MIN_RUNNING + 1, RUNNING * count)
    running = {shape for shape, times in repeated.items() if times >= least}
    return [
        [
            line
            for line in page
            if id(line) not in edges
            or not (running & edges[id(line)] or _PAGE_NUMBER.match(line.text))
        ]
        for page, edges in zip(pages, shapes, strict=True)
    ]


def _shapes(line: Line, body: float) -> set[str]:
    """How a line repeats: as it is (spacing and case aside), and, unless it is larger than
    the body's size, its numbers aside too."""
    exact = " ".join(line.text.lower().split())
    if body and line.size > body * 1.05:
        return {exact}
    return {exact, "#:" + _DIGITS.sub("#", exact)}


def _edges(page: Page) -> list[Line]:
    """A page's first and last lines with text that could run: up to :data:`EDGE_LINES` at
    each edge, a third of its lines at most, none longer than :data:`RUNNING_LENGTH`."""
    written = [line for line in page if line.text.strip()]
    each = min(EDGE_LINES, len(written) // 3) or (1 if len(written) > 1 else 0)
    edges = written[:each] + written[len(written) - each :] if each else written
    return [line for line in edges if len(line.text.strip()) <= RUNNING_LENGTH]


def body_size(pages: Sequence[Page]) -> float:
    """The size most of the document's characters are in."""
    weights: Counter[float] = Counter()
    for lines in pages:
        for line in lines:
            if line.size > 1.0:
                weights[line.size] += len(line.text)
    return weights.most_common(1)[0][0] if weights else 0.0


def heading_levels(pages: Sequence[Page], body: float, ratio: float) -> dict[float, int]:
    """Each size larger than the body's by ``ratio``: its heading level."""
    if not body:
        return {}
    sizes = {
        line.size
        for lines in pages
        for line in lines
        if line.size >= ratio * body and 0 < len(line.text.strip()) <= HEADING_LENGTH
    }
    return {size: min(n + 1, 3) for n, size in enumerate(sorted(sizes, reverse=True))}


def page_markdown(lines: Page, levels: dict[float, int]) -> str:
    """A page's lines as markdown blocks: headings, list items, contents' entries, paragraphs."""
    usual = _usual_length(lines)
    blocks: list[str] = []
    paragraph: list[str] = []

    def close() -> None:
        if paragraph:
            blocks.append(escaped(unhyphenated(" ".join(paragraph))))
            paragraph.clear()

    for line in lines:
        text = line.text.strip()
        if not text:
            close()
            continue
        level = levels.get(line.size) if len(text) <= HEADING_LENGTH else None
        if level is not None:
            close()
            heading = "#" * level + " "
            if blocks and blocks[-1].startswith(heading) and len(blocks[-1]) < HEADING_LENGTH:
                blocks[-1] += " " + unhyphenated(text)  # a heading on two lines
            else:
                blocks.append(heading + unhyphenated(text))
            continue
        entry = _contents_entry(text)
        if entry is not None:
            close()
            blocks.append(escaped(entry))
            continue
        item = _list_item(text)
        if item is not None:
            close()
        paragraph.append(item or text)
        if len(text) < SHORT_LINE * usual:
            close()
    close()
    return "\n\n".join(blocks)


def page_text(lines: Page) -> str:
    """A page's text, line by line, hyphenated words whole again, dot leaders cut short."""
    said = []
    for line in lines:
        text = line.text.rstrip()
        said.append(_contents_entry(text) or text)
    return unhyphenated("\n".join(said).replace(HYPHEN + "\n", HYPHEN + " ")).strip()


def _contents_entry(text: str) -> str | None:
    """A table of contents' line without its dot leaders (``1 Introduction — 1``), or None."""
    if len(text) > ENTRY_LENGTH or ("...." not in text and ". . . ." not in text):
        return None
    entry = _LEADERS.match(text)
    return None if entry is None else f"{entry['title']} — {entry['page']}"


def unhyphenated(text: str) -> str:
    """``text`` with the words marked :data:`HYPHEN` whole again (at a line's end, the mark
    is followed by the space that joined the lines)."""
    return text.replace(HYPHEN + " ", "").replace(HYPHEN, "")


def _usual_length(lines: Page) -> int:
    """The length most of a page's long lines have (a paragraph's full lines)."""
    lengths = sorted(len(line.text.strip()) for line in lines if line.text.strip())
    return lengths[(len(lengths) * 3) // 4] if lengths else 0


def _list_item(text: str) -> str | None:
    bullet = _BULLET.match(text)
    if bullet:
        return "- " + text[bullet.end() :]
    number = _NUMBERED.match(text)
    if number:
        return f"{number.group(1)}. " + text[number.end() :]
    return None
