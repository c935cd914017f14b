"""PDF documents: their text layer, read by PDFium (pypdfium2), and the pages without one
(a scan) read by OCR, as markdown.

PDFium gives each page's text in reading order, line by line, and each character's font size;
OCR gives a scanned page's lines in reading order with their heights (ocr.py). Either way the
lines make the markdown (page_lines.py): paragraphs, headings by size, list items, contents'
entries; running headers, footers and page numbers left out. Tables and images are not seen.
How pages are read (``DocumentOptions.ocr``): ``fast``, the text layer only; ``auto`` (the
default), the text layer, and OCR for a page that has none; ``ocr``, every page by OCR. A page
is rasterised for OCR at the request's DPI, less when the page is so large that its image
would pass the pixel limit. Chosen by measuring (bench/README.md, "Documents"): 2.3 ms a page
on a 117-page book, word F1 0.95 against its true text, where pypdf took 27 ms (0.89) and
pdfminer.six 80 ms (0.81).
"""

from __future__ import annotations

import ctypes
import math
import re
from collections.abc import Iterator
from typing import Any

import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]
from pydantic import JsonValue

from .document import Document, DocumentOptions, DocumentPage, DocumentUnreadable
from .ocr import OcrPages, OcrRequest
from .page_lines import Line, written_pages

TEXT_LAYER_CHARS = 16  # a page with fewer characters than this has no text layer (auto)
SAMPLED = 3  # characters of a line whose font size is read
MAX_PAGE_LINKS = 1000  # links read of a page, at most
MAX_PAGE_COUNT = 100_000  # a PDF of more pages is refused (pages past max_pages are not read)
MAX_URL = 8192  # a longer link is left out
_PDF_DATE = re.compile(
    r"D:(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?([Zz]|[+-]\d{2}'?\d{2}'?)?"
)


def read_pdf(data: bytes, options: DocumentOptions) -> Document:
    """``data`` (a PDF) read: its first ``options.max_pages`` pages as markdown (a page without
    a text layer read by OCR, as ``options.ocr`` says), its metadata.
    :class:`DocumentUnreadable` for a PDF that is password-protected or broken."""
    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise DocumentUnreadable(_unreadable(str(exc))) from None
    ocr = OcrPages(options.ocr or OcrRequest())
    try:
        page_count = len(pdf)
        if page_count > MAX_PAGE_COUNT:
            raise DocumentUnreadable(
                f"the PDF has {page_count:,} pages, more than {MAX_PAGE_COUNT:,} (a page bomb?)"
            )
        found = [_read_page(pdf, n, ocr) for n in range(min(page_count, options.max_pages))]
        metadata = _metadata(pdf.get_metadata_dict(), page_count)
    finally:
        pdf.close()
    written = written_pages([lines for lines, _, _ in found], [by_ocr for _, _, by_ocr in found])
    read = tuple(
        DocumentPage(n + 1, markdown, text, links)
        for n, ((markdown, text), (_, links, _)) in enumerate(zip(written, found, strict=True))
    )
    notes = tuple(note for note in (ocr.note(),) if note)
    return Document(read, page_count, metadata, options.page_markers, ocr.read_count, notes)


def _unreadable(message: str) -> str:
    if "password" in message.lower():
        return "the PDF is password-protected"
    return f"the PDF cannot be read: {message}"


def _read_page(pdf: Any, number: int, ocr: OcrPages) -> tuple[list[Line], tuple[str, ...], bool]:
    """Page ``number`` (from 0): its lines, each with its font size (or height, read by OCR),
    where it links, and whether OCR read it."""
    page = pdf[number]
    textpage = page.get_textpage()
    try:
        lines = list(_lines(textpage))
        links = _links(pdf.raw, page.raw, textpage.raw)
        if _wants_ocr(lines, ocr.request) and ocr.allowed():
            return ocr.read(_rasterised(page, ocr.request)), links, True
        return lines, links, False
    finally:
        textpage.close()
        page.close()


def _wants_ocr(lines: list[Line], request: OcrRequest) -> bool:
    if request.mode == "fast":
        return False
    if request.mode == "ocr":
        return True
    return sum(len(line.text.strip()) for line in lines) < TEXT_LAYER_CHARS


def _rasterised(page: Any, request: OcrRequest) -> Any:
    """The page as a grey image at the request's DPI, or less: within the pixel limit."""
    width, height = page.get_size()  # points
    scale = request.dpi / 72
    area = max(width * height, 1.0)
    scale = min(scale, math.sqrt(request.limits.max_pixels / area))
    return page.render(scale=scale, grayscale=True).to_pil()


def _lines(textpage: Any) -> Iterator[Line]:
    count = textpage.count_chars()
    text = textpage.get_text_range()
    sized = len(text) == count  # one character a UTF-16 unit: sizes can be looked up
    start = 0
    for raw in text.split("\r\n"):
        size = _size(textpage.raw, start, len(raw)) if sized else 0.0
        start += len(raw) + 2
        yield Line(raw, size)


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
