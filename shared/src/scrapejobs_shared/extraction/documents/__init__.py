"""Documents that are not web pages (PDF first), read into markdown, text and metadata.

A document reader is one module here taking the file's bytes and :class:`DocumentOptions` and
giving a :class:`Document`; :func:`read_document` chooses it by the classified media type.
Readers run where pages are parsed (the extraction processes), under the same CPU and memory
budgets; a file that cannot be read (password, broken, too many pages) raises
:class:`DocumentUnreadable`, a typed failure of that document alone.
"""

from __future__ import annotations

from ..content_kind import PDF
from .document import (
    DEFAULT_MAX_PAGES,
    UNREAD_MAX_BYTES,
    Document,
    DocumentOptions,
    DocumentPage,
    DocumentUnreadable,
)
from .pdf import read_pdf

__all__ = [
    "DEFAULT_MAX_PAGES",
    "UNREAD_MAX_BYTES",
    "Document",
    "DocumentOptions",
    "DocumentPage",
    "DocumentUnreadable",
    "read_document",
]

READERS = {PDF: read_pdf}


def read_document(media_type: str, data: bytes, options: DocumentOptions) -> Document:
    """``data`` (a document of ``media_type``, one :data:`READERS` reads) read."""
    return READERS[media_type](data, options)
