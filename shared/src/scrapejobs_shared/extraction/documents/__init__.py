"""Documents that are not web pages (PDF, Word, Excel, PowerPoint, OpenDocument, RTF, EPUB,
images), read into markdown, text and metadata; scans and images by OCR (ocr.py).

A document reader is one module here taking the file's bytes and :class:`DocumentOptions` and
giving a :class:`Document`; :func:`read_document` chooses it by the classified media type.
Readers run where pages are parsed (the extraction processes), under the same CPU and memory
budgets; a file that cannot be read (password, broken, too many pages) raises
:class:`DocumentUnreadable`, a typed failure of that document alone.
"""

from __future__ import annotations

from ..document_types import DOCX, EPUB, IMAGES, ODS, ODT, PDF, PPTX, RTF, XLS, XLSX
from .document import (
    DEFAULT_MAX_PAGES,
    UNREAD_MAX_BYTES,
    Document,
    DocumentOptions,
    DocumentPage,
    DocumentUnreadable,
)
from .epub import read_epub
from .images import read_image
from .opendocument import read_odt
from .pdf import read_pdf
from .rtf import read_rtf
from .slides import read_pptx
from .spreadsheet import read_ods, read_xls, read_xlsx
from .word import read_docx

__all__ = [
    "DEFAULT_MAX_PAGES",
    "UNREAD_MAX_BYTES",
    "Document",
    "DocumentOptions",
    "DocumentPage",
    "DocumentUnreadable",
    "read_document",
]

# each kind of document (document_types.py) that is read, by its media type
READERS = {
    PDF.media_type: read_pdf,
    DOCX.media_type: read_docx,
    XLSX.media_type: read_xlsx,
    XLS.media_type: read_xls,
    ODS.media_type: read_ods,
    PPTX.media_type: read_pptx,
    ODT.media_type: read_odt,
    RTF.media_type: read_rtf,
    EPUB.media_type: read_epub,
} | {image.media_type: read_image for image in IMAGES}


LABELS = {
    kind.media_type: kind.label
    for kind in (PDF, DOCX, XLSX, XLS, ODS, PPTX, ODT, RTF, EPUB, *IMAGES)
}


def read_document(media_type: str, data: bytes, options: DocumentOptions) -> Document:
    """``data`` (a document of ``media_type``, one :data:`READERS` reads) read; whatever a
    reader's library raises on a malformed file (an XML parser's ``ExpatError`` inside a
    Word file's parts, a ``KeyError`` of a missing part...) is that document's
    :class:`DocumentUnreadable`: permanent, never retried as an error of ours."""
    try:
        return READERS[media_type](data, options)
    except (DocumentUnreadable, MemoryError):
        raise
    except Exception as exc:
        label = LABELS.get(media_type, "document")
        why = f"{type(exc).__name__}: {str(exc)[:200]}"
        raise DocumentUnreadable(f"the {label} file cannot be read ({why})") from None
