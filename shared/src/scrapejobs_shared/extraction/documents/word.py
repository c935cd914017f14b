"""Word documents (DOCX): mammoth turns the file's paragraphs, styles (Heading 1... as headings),
lists, tables and links into HTML, which becomes markdown as web pages do; images are left out.
One page (a Word file has no fixed pages). Chosen by measuring (bench/README.md, "Documents"):
36 ms for a 135 KB paper, every heading and paragraph markitdown's tests expect, in half
markitdown's time."""

from __future__ import annotations

import io
from typing import Any

import mammoth  # type: ignore[import-untyped]

from ..document_types import DOCX
from .containers import core_properties, open_package
from .document import Document, DocumentOptions, DocumentUnreadable
from .markup import html_page


def _no_image(image: Any) -> dict[str, str]:
    return {}  # the image is never read: markdown leaves images out


def read_docx(data: bytes, options: DocumentOptions) -> Document:
    package = open_package(data, DOCX.label)
    metadata = core_properties(package, DOCX.label)
    try:
        html = mammoth.convert_to_html(
            io.BytesIO(data), convert_image=mammoth.images.img_element(_no_image)
        ).value
    except (KeyError, ValueError, OSError, AttributeError, TypeError) as exc:
        raise DocumentUnreadable(f"the {DOCX.label} file cannot be read: {exc!r}") from None
    page = html_page(1, f"<html><body>{html}</body></html>", DOCX.label)
    return Document((page,), 1, metadata | {"page_count": 1}, options.page_markers)
