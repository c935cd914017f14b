"""PDF documents: their text layer, read by PDFium (pypdfium2), as markdown.

PDFium gives each page's text in reading order, line by line, and each character's font size;
from these the markdown is made: lines joined into paragraphs (a line much shorter than the
page's usual line ends one; a word PDFium marks as hyphenated at a line's end is joined), a
line in a font clearly larger than the body's (the size most of the document's characters
have) is a heading (``#`` for the largest size, down to ``###``), a line starting with a bullet
or a number is a list item. Tables and images are not seen (a text layer has none); a scanned
PDF without a text layer gives empty pages. Chosen by measuring (bench/README.md,
"Documents"): 2.3 ms a page on a 117-page book, word F1 0.95 against its true text, where
pypdf took 27 ms (0.89) and pdfminer.six 80 ms (0.81).
"""

from __future__ import annotations

import ctypes
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]
from pydantic import JsonValue

from .document import Document, DocumentOptions, DocumentPage, DocumentUnreadable
from .plain_text import escaped

HEADING_RATIO = 1.15  # a line this much larger than the body's size is a heading
HEADING_LENGTH = 150  # characters: a longer line is not a heading, whatever its size
SHORT_LINE = 0.7  # of the page's usual line length: a shorter line ends its paragraph
SAMPLED = 3  # characters of a line whose font size is read
MAX_PAGE_LINKS = 1000  # links read of a page, at most
MAX_PAGE_COUNT = 100_000  # a PDF of more pages is refused (pages past max_pages are not read)
MAX_URL = 8192  # a longer link is left out
HYPHEN = "\ufffe"  # PDFium's mark of a word hyphenated at a line's end
# Bullets: • ◦ ▪ ‣ ● ○ ■ □, an en dash, a hyphen, an asterisk.
_BULLET = re.compile("^\\s*(?:[\u2022\u25e6\u25aa\u2023\u25cf\u25cb\u25a0\u25a1\u2013*-])\\s+")
_NUMBERED = re.compile(r"^\s*(\d{1,3})[.)]\s+")
_PDF_DATE = re.compile(
    r"D:(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?([Zz]|[+-]\d{2}'?\d{2}'?)?"
)


@dataclass(frozen=True, slots=True)
class _Line:
    text: str
    size: float  # its font size (0: unknown)


def read_pdf(data: bytes, options: DocumentOptions) -> Document:
    """``data`` (a PDF) read: its first ``options.max_pages`` pages as markdown, its metadata.
    :class:`DocumentUnreadable` for a PDF that is password-protected or broken."""
    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise DocumentUnreadable(_unreadable(str(exc))) from None
    try:
        page_count = len(pdf)
        if page_count > MAX_PAGE_COUNT:
            raise DocumentUnreadable(
                f"the PDF has {page_count:,} pages, more than {MAX_PAGE_COUNT:,} (a page bomb?)"
            )
        found = [_read_page(pdf, n) for n in range(min(page_count, options.max_pages))]
        metadata = _metadata(pdf.get_metadata_dict(), page_count)
    finally:
        pdf.close()
    pages = [lines for lines, _ in found]
    body = _body_size(pages)
    levels = _heading_levels(pages, body)
    read = tuple(
        DocumentPage(n + 1, _markdown(lines, levels), _text(lines), links)
        for n, (lines, links) in enumerate(found)
    )
    return Document(read, page_count, metadata, options.page_markers)


def _unreadable(message: str) -> str:
    if "password" in message.lower():
        return "the PDF is password-protected"
    return f"the PDF cannot be read: {message}"


def _read_page(pdf: Any, number: int) -> tuple[list[_Line], tuple[str, ...]]:
    """Page ``number`` (from 0): its lines, each with its font size, and where it links."""
    page = pdf[number]
    textpage = page.get_textpage()
    try:
        return list(_lines(textpage)), _links(pdf.raw, page.raw, textpage.raw)
    finally:
        textpage.close()
        page.close()


def _lines(textpage: Any) -> Iterator[_Line]:
    count = textpage.count_chars()
    text = textpage.get_text_range()
    sized = len(text) == count  # one character a UTF-16 unit: sizes can be looked up
    start = 0
    for raw in text.split("\r\n"):
        size = _size(textpage.raw, start, len(raw)) if sized else 0.0
        start += len(raw) + 2
        yield _Line(raw, size)


def _links(pdf: Any, page: Any, textpage: Any) -> tuple[str, ...]:
    """Where a page links: its link annotations' URIs, then the URLs its text spells out
    (PDFium's web links), at most :data:`MAX_PAGE_LINKS`, each at most :data:`MAX_URL` long."""
    found: list[str] = []
    position, link = ctypes.c_int(0), pdfium_c.FPDF_LINK()
    while len(found) < MAX_PAGE_LINKS and pdfium_c.FPDFLink_Enumerate(
        page, ctypes.byref(position), ctypes.byref(link)
    ):
        action = pdfium_c.FPDFLink_GetAction(link)
        if not action or pdfium_c.FPDFAction_GetType(action) != pdfium_c.PDFACTION_URI:
            continue
        size = pdfium_c.FPDFAction_GetURIPath(pdf, action, None, 0)
        if 0 < size <= MAX_URL:
            buffer = ctypes.create_string_buffer(size)
            pdfium_c.FPDFAction_GetURIPath(pdf, action, buffer, size)
            found.append(buffer.value.decode("latin-1"))
    web = pdfium_c.FPDFLink_LoadWebLinks(textpage)
    try:
        for index in range(pdfium_c.FPDFLink_CountWebLinks(web)):
            if len(found) >= MAX_PAGE_LINKS:
                break
            size = pdfium_c.FPDFLink_GetURL(web, index, None, 0)  # UTF-16 units, with a NUL
            if 0 < size <= MAX_URL:
                units = (ctypes.c_ushort * size)()
                pdfium_c.FPDFLink_GetURL(web, index, units, size)
                found.append(bytes(units).decode("utf-16-le", "replace").rstrip("\x00"))
    finally:
        pdfium_c.FPDFLink_CloseWebLinks(web)
    return tuple(found)


def _size(textpage: object, start: int, length: int) -> float:
    """The largest font size among a line's first few characters."""
    sizes = [
        pdfium_c.FPDFText_GetFontSize(textpage, index)
        for index in range(start, start + min(length, SAMPLED))
    ]
    return round(max(sizes, default=0.0), 1)


def _body_size(pages: list[list[_Line]]) -> float:
    """The font size most of the document's characters are in."""
    weights: Counter[float] = Counter()
    for lines in pages:
        for line in lines:
            if line.size > 1.0:
                weights[line.size] += len(line.text)
    return weights.most_common(1)[0][0] if weights else 0.0


def _heading_levels(pages: list[list[_Line]], body: float) -> dict[float, int]:
    """Each font size larger than the body's by ``HEADING_RATIO``: its heading level."""
    if not body:
        return {}
    sizes = {
        line.size
        for lines in pages
        for line in lines
        if line.size >= HEADING_RATIO * body and 0 < len(line.text.strip()) <= HEADING_LENGTH
    }
    return {size: min(n + 1, 3) for n, size in enumerate(sorted(sizes, reverse=True))}


def _markdown(lines: list[_Line], levels: dict[float, int]) -> str:
    """A page's lines as markdown blocks: headings, list items, paragraphs."""
    usual = _usual_length(lines)
    blocks: list[str] = []
    paragraph: list[str] = []

    def close() -> None:
        if paragraph:
            blocks.append(escaped(_unhyphenated(" ".join(paragraph))))
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
                blocks[-1] += " " + _unhyphenated(text)  # a heading on two lines
            else:
                blocks.append(heading + _unhyphenated(text))
            continue
        item = _list_item(text)
        if item is not None:
            close()
        paragraph.append(item or text)
        if len(text) < SHORT_LINE * usual:
            close()
    close()
    return "\n\n".join(blocks)


def _text(lines: list[_Line]) -> str:
    """A page's text, line by line, hyphenated words whole again."""
    return _unhyphenated(
        "\n".join(line.text.rstrip() for line in lines).replace(HYPHEN + "\n", HYPHEN + " ")
    ).strip()


def _unhyphenated(text: str) -> str:
    """``text`` with the words PDFium marks as hyphenated whole again (at a line's end, the
    mark is followed by the space that joined the lines)."""
    return text.replace(HYPHEN + " ", "").replace(HYPHEN, "")


def _usual_length(lines: list[_Line]) -> int:
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


def _metadata(said: dict[str, str], page_count: int) -> dict[str, JsonValue]:
    """What the PDF says of itself, named as the ``metadata`` format names a page's."""
    found: dict[str, JsonValue] = {"page_count": page_count}
    for key, name in (
        ("Title", "title"),
        ("Author", "author"),
        ("Subject", "description"),
        ("Keywords", "keywords"),
        ("Creator", "creator"),
        ("Producer", "producer"),
    ):
        value = (said.get(key) or "").strip()
        if value:
            found[name] = value
    for key, name in (("CreationDate", "created"), ("ModDate", "modified")):
        when = _iso_date(said.get(key) or "")
        if when:
            found[name] = when
    return found


def _iso_date(value: str) -> str | None:
    """A PDF date (``D:20220403193102+02'00'``) in ISO 8601, or None."""
    match = _PDF_DATE.match(value.strip())
    if not match:
        return None
    year, month, day, hour, minute, second, zone = match.groups()
    date = f"{year}-{month or '01'}-{day or '01'}"
    if hour is None:
        return date
    time = f"{hour}:{minute or '00'}:{second or '00'}"
    if not zone:
        return f"{date}T{time}"
    if zone in "Zz":
        return f"{date}T{time}Z"
    digits = zone[1:].replace("'", "")
    return f"{date}T{time}{zone[0]}{digits[:2]}:{digits[2:4] or '00'}"
