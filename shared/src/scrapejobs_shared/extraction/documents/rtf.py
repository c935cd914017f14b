"""Rich Text (RTF): its text, by striprtf (the control words dropped, special characters and
Unicode escapes decoded), as paragraphs. RTF carries no heading a text layer can see."""

from __future__ import annotations

from striprtf.striprtf import rtf_to_text

from ..document_types import RTF
from .document import Document, DocumentOptions, DocumentPage, DocumentUnreadable
from .plain_text import escaped_paragraphs


def read_rtf(data: bytes, options: DocumentOptions) -> Document:
    try:
        text: str = rtf_to_text(data.decode("latin-1"), errors="replace")  # type: ignore[no-untyped-call]
    except (ValueError, IndexError, RecursionError) as exc:
        raise DocumentUnreadable(f"the {RTF.label} file cannot be read: {exc!r}") from None
    lines = [" ".join(line.split()) for line in text.splitlines()]
    text = "\n".join(line for line in lines if line)
    page = DocumentPage(1, escaped_paragraphs(lines), text)
    return Document((page,), 1, {"page_count": 1}, options.page_markers)
