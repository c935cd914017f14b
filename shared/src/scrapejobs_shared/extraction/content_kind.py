"""What a response is, decided from its Content-Type, sniffing the body only when needed.

Declared types decide, with one safety net: a body that starts with a well-known binary
signature (ZIP, gzip, audio...) is unsupported whatever the header says, and one that starts
as a document (a PDF, an image...) is that document, so a mislabelled file is read for what
it is or is a clear failure, never garbage parsed as HTML.

* ``text/html``, ``application/xhtml+xml`` → :attr:`ContentKind.HTML`.
* ``text/xml``, ``application/xml`` and ``*+xml`` (RSS, Atom, sitemaps...) →
  :attr:`ContentKind.XML`: parsed with an XML parser, namespaces removed so selectors use
  local names. An HTML parser would break feeds (``<link>`` is a void element in HTML, so
  an RSS ``<link>https://...</link>`` loses its URL).
* ``application/json``, ``text/json``, ``*+json`` → :attr:`ContentKind.JSON`.
* other ``text/*`` (plain, csv, markdown...) and textual application types (javascript,
  ndjson, yaml...) → :attr:`ContentKind.TEXT`.
* documents (:mod:`.document_types`: PDF, Word, Excel, PowerPoint, OpenDocument, RTF, EPUB),
  by their declared type or, whatever it is, by their content (``%PDF-``, ``{\\rtf``, a zip
  package or compound file holding one) → :attr:`ContentKind.DOCUMENT`, read by
  :mod:`.documents`; a document of a kind not read (Word 97-2003) is unsupported, saying so.
* images (PNG, JPEG, GIF, TIFF, WebP), by their declared type or their first bytes, are
  documents too: read by OCR (documents/images.py).
* other ``image/*``, ``audio/*``, ``video/*``, ``font/*``, ``model/*``, ``multipart/*``,
  archives and any other ``application/*`` → :attr:`ContentKind.UNSUPPORTED`.
* no usable Content-Type, ``application/octet-stream`` and other "unknown" types → sniff:
  binary signatures first; then, after a BOM and whitespace: ``<?xml`` → XML (HTML when
  an ``<html`` tag follows); ``<rss``, ``<feed``, ``<urlset``... → XML; anything else
  starting with ``<`` (``<!doctype html``, ``<html``, ``<div``...) → HTML; ``{`` or ``[``
  → JSON; control bytes → unsupported binary; otherwise text. An empty body without a
  type is HTML (every field gets its default).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from scrapejobs_shared.errors import WorkFailed

from .document_types import BY_MEDIA_TYPE, DOCUMENT_STARTS, DocumentType, sniff_document
from .document_types import PDF as PDF_DOCUMENT
from .media_type import MediaType

SNIFF_BYTES = 1024


class ContentKind(StrEnum):
    HTML = "html"
    XML = "xml"
    JSON = "json"
    TEXT = "text"
    DOCUMENT = "document"
    UNSUPPORTED = "unsupported"


class UnsupportedContent(WorkFailed):
    """The response cannot be extracted from; ``reason`` says why, for the task record."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Classification:
    """A response's kind and media type (declared, or sniffed when ``sniffed``)."""

    kind: ContentKind
    media_type: str
    sniffed: bool = False
    reason: str | None = None  # why it is unsupported

    def describe(self) -> str:
        """A short human name for the content, for messages ("JSON", "text/csv"...)."""
        if self.kind is ContentKind.JSON:
            return "JSON"
        return self.media_type or _KIND_NAMES[self.kind]


_KIND_NAMES = {
    ContentKind.HTML: "HTML",
    ContentKind.XML: "XML",
    ContentKind.JSON: "JSON",
    ContentKind.TEXT: "plain text",
    ContentKind.DOCUMENT: "a document",
    ContentKind.UNSUPPORTED: "unsupported content",
}
PDF = PDF_DOCUMENT.media_type
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml", "application/vnd.wap.xhtml+xml"})
_XML_TYPES = frozenset({"text/xml", "application/xml", "text/xsl"})
_JSON_TYPES = frozenset({"application/json", "text/json", "text/x-json", "application/x-json"})
_TEXT_APPLICATION_TYPES = frozenset(
    {
        "application/javascript",
        "application/x-javascript",
        "application/ecmascript",
        "application/x-ndjson",
        "application/jsonl",
        "application/x-jsonlines",
        "application/yaml",
        "application/x-yaml",
        "application/toml",
        "application/csv",
        "application/sql",
        "application/graphql",
        "application/x-sh",
        "application/x-www-form-urlencoded",
    }
)
_UNKNOWN_TYPES = frozenset(
    {
        "",
        "application/octet-stream",
        "binary/octet-stream",
        "application/unknown",
        "application/x-unknown-content-type",
        "unknown/unknown",
        "*/*",
    }
)
_BINARY_TOP_LEVEL = frozenset({"image", "audio", "video", "font", "model", "multipart"})
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "application/pdf"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x1f\x8b\x08", "application/gzip"),
    (b"BZh", "application/x-bzip2"),
    (b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"),
    (b"Rar!\x1a\x07", "application/vnd.rar"),
    (b"OggS\x00", "audio/ogg"),
    (b"ID3", "audio/mpeg"),
    (b"\x00asm", "application/wasm"),
    (b"\x7fELF", "application/x-executable"),
    (b"wOFF", "font/woff"),
    (b"wOF2", "font/woff2"),
    (b"%!PS", "application/postscript"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "application/x-ole-storage"),
)
_XML_ROOTS = ("<rss", "<feed", "<urlset", "<sitemapindex", "<rdf:rdf")
_CONTROL_BYTES = (
    frozenset(range(0x00, 0x09))
    | {0x0B}
    | frozenset(range(0x0E, 0x1B))
    | frozenset(range(0x1C, 0x20))
)


def classify_content(content_type: str | MediaType | None, body: bytes) -> Classification:
    """Classify a response by its Content-Type header value and (when needed) its body."""
    media = content_type if isinstance(content_type, MediaType) else MediaType.parse(content_type)
    found = sniff_document(body) if body.startswith(DOCUMENT_STARTS) else None
    declared_document = BY_MEDIA_TYPE.get(media.essence)
    if found is not None or declared_document is not None:
        document = found or declared_document
        assert document is not None
        return _document(document, sniffed=media.essence not in document.media_types)
    signature = _binary_signature(body)
    if media.essence in _UNKNOWN_TYPES:
        return _sniff(body, signature)
    declared = _declared_kind(media)
    if declared is ContentKind.UNSUPPORTED:
        return Classification(
            declared, media.essence, reason=f"unsupported content type {media.essence}"
        )
    if signature is not None:
        reason = f"unsupported content: declared {media.essence} but the body is {signature}"
        return Classification(ContentKind.UNSUPPORTED, signature, sniffed=True, reason=reason)
    return Classification(declared, media.essence)


def _document(document: DocumentType, *, sniffed: bool) -> Classification:
    if not document.readable:
        reason = f"{document.label} files are not read: save it as a newer format, or a PDF"
        return Classification(ContentKind.UNSUPPORTED, document.media_type, sniffed, reason)
    return Classification(ContentKind.DOCUMENT, document.media_type, sniffed)


def _declared_kind(media: MediaType) -> ContentKind:
    essence, kind, subtype = media.essence, media.type, media.subtype
    if kind in _BINARY_TOP_LEVEL:
        return ContentKind.UNSUPPORTED
    if essence in _HTML_TYPES:
        return ContentKind.HTML
    if essence in _XML_TYPES or subtype.endswith("+xml"):
        return ContentKind.XML
    if essence in _JSON_TYPES or subtype.endswith("+json"):
        return ContentKind.JSON
    if kind == "text" or essence in _TEXT_APPLICATION_TYPES:
        return ContentKind.TEXT
    return ContentKind.UNSUPPORTED


def _binary_signature(body: bytes) -> str | None:
    for magic, media_type in _SIGNATURES:
        if body.startswith(magic):
            return media_type
    if body[:4] == b"RIFF" and body[8:12] in (b"WEBP", b"WAVE", b"AVI "):
        return {b"WEBP": "image/webp", b"WAVE": "audio/wav", b"AVI ": "video/x-msvideo"}[body[8:12]]
    if body[4:8] == b"ftyp":
        return "video/mp4"
    return None


def _sniff(body: bytes, signature: str | None) -> Classification:
    if signature is not None:
        reason = f"unsupported content: the body is {signature}"
        return Classification(ContentKind.UNSUPPORTED, signature, sniffed=True, reason=reason)
    head, has_bom = _sniff_text(body[:SNIFF_BYTES])
    if not head:
        return Classification(ContentKind.HTML, "", sniffed=True)
    if head.startswith("<?xml"):
        kind = ContentKind.HTML if "<html" in head else ContentKind.XML
        return Classification(kind, "", sniffed=True)
    if head.startswith(_XML_ROOTS):
        return Classification(ContentKind.XML, "", sniffed=True)
    if head.startswith("<"):
        return Classification(ContentKind.HTML, "", sniffed=True)
    if head[0] in "{[":
        return Classification(ContentKind.JSON, "", sniffed=True)
    if not has_bom and not _CONTROL_BYTES.isdisjoint(body[:SNIFF_BYTES]):
        reason = "unsupported content: binary data without a content type"
        return Classification(ContentKind.UNSUPPORTED, "", sniffed=True, reason=reason)
    return Classification(ContentKind.TEXT, "", sniffed=True)


def _sniff_text(prefix: bytes) -> tuple[str, bool]:
    """The lower-cased start of the body as text (1 char per byte unless UTF-16)."""
    if prefix.startswith((b"\xff\xfe", b"\xfe\xff")):
        codec = "utf-16-le" if prefix[0] == 0xFF else "utf-16-be"
        return prefix[2:].decode(codec, "ignore").lstrip().lower(), True
    has_bom = prefix.startswith(b"\xef\xbb\xbf")
    text = prefix[3:] if has_bom else prefix
    return text.decode("latin-1").lstrip().lower(), has_bom
