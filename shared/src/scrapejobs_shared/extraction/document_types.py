"""The kinds of document read as documents (not web pages): each by its name, media types and
file extensions, and how a body is recognised as one whatever its declared type.

The table serves the classification (:mod:`.content_kind`), the readers
(:mod:`.documents`, one module each) and what the parse endpoints say they accept.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DocumentType:
    name: str  # "pdf", "docx": Firecrawl's format names
    label: str  # for people: "PDF", "Word (DOCX)"
    media_types: tuple[str, ...]  # the first is the canonical one
    extensions: tuple[str, ...]
    readable: bool = True  # False: known, refused with a reason (a format not read here)
    image: bool = False  # a picture, read by OCR (documents/images.py)

    @property
    def media_type(self) -> str:
        return self.media_types[0]


PDF = DocumentType(
    "pdf", "PDF", ("application/pdf", "application/x-pdf", "application/acrobat"), (".pdf",)
)
DOCX = DocumentType(
    "docx",
    "Word (DOCX)",
    ("application/vnd.openxmlformats-officedocument.wordprocessingml.document",),
    (".docx",),
)
DOC = DocumentType("doc", "Word 97-2003 (DOC)", ("application/msword",), (".doc",), readable=False)
XLSX = DocumentType(
    "xlsx",
    "Excel (XLSX)",
    ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",),
    (".xlsx",),
)
XLS = DocumentType("xls", "Excel 97-2003 (XLS)", ("application/vnd.ms-excel",), (".xls",))
PPTX = DocumentType(
    "pptx",
    "PowerPoint (PPTX)",
    ("application/vnd.openxmlformats-officedocument.presentationml.presentation",),
    (".pptx",),
)
PPT = DocumentType(
    "ppt", "PowerPoint 97-2003 (PPT)", ("application/vnd.ms-powerpoint",), (".ppt",), readable=False
)
ODT = DocumentType(
    "odt", "OpenDocument text (ODT)", ("application/vnd.oasis.opendocument.text",), (".odt",)
)
ODS = DocumentType(
    "ods",
    "OpenDocument spreadsheet (ODS)",
    ("application/vnd.oasis.opendocument.spreadsheet",),
    (".ods",),
)
RTF = DocumentType("rtf", "Rich Text (RTF)", ("application/rtf", "text/rtf"), (".rtf",))
EPUB = DocumentType("epub", "EPUB", ("application/epub+zip",), (".epub",))
PNG = DocumentType("png", "PNG image", ("image/png",), (".png",), image=True)
JPEG = DocumentType(
    "jpeg", "JPEG image", ("image/jpeg", "image/pjpeg"), (".jpg", ".jpeg"), image=True
)
TIFF = DocumentType("tiff", "TIFF image", ("image/tiff",), (".tif", ".tiff"), image=True)
WEBP = DocumentType("webp", "WebP image", ("image/webp",), (".webp",), image=True)
GIF = DocumentType("gif", "GIF image", ("image/gif",), (".gif",), image=True)
IMAGES = (PNG, JPEG, TIFF, WEBP, GIF)

DOCUMENT_TYPES = (PDF, DOCX, DOC, XLSX, XLS, PPTX, PPT, ODT, ODS, RTF, EPUB, *IMAGES)
BY_MEDIA_TYPE = {media: kind for kind in DOCUMENT_TYPES for media in kind.media_types}
BY_EXTENSION = {ext: kind for kind in DOCUMENT_TYPES for ext in kind.extensions}

ZIP = b"PK\x03\x04"
RTF_START = b"{\\rtf"
OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # Microsoft's compound file (XLS, DOC, encrypted)
# OpenDocument and EPUB start with an uncompressed "mimetype" part naming their type
_MIMETYPE_PART = b"mimetype"
# an Office Open XML package by the part its main document is
_OOXML_PARTS = {b"word/document.xml": DOCX, b"xl/workbook.xml": XLSX, b"ppt/presentation.xml": PPTX}
# a compound file by its streams' names (UTF-16 in its directory)
_OLE_STREAMS = {
    "EncryptedPackage".encode("utf-16-le"): DOCX,  # a password-protected OOXML file
    "Workbook".encode("utf-16-le"): XLS,
    "Book".encode("utf-16-le"): XLS,
    "WordDocument".encode("utf-16-le"): DOC,
    "PowerPoint Document".encode("utf-16-le"): PPT,
}


# images by their first bytes (WebP: RIFF, its size, then WEBP)
IMAGE_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", PNG),
    (b"\xff\xd8\xff", JPEG),
    (b"GIF87a", GIF),
    (b"GIF89a", GIF),
    (b"II*\x00", TIFF),
    (b"MM\x00*", TIFF),
)
DOCUMENT_STARTS = (b"%PDF-", ZIP, OLE, RTF_START, b"RIFF", *(s for s, _ in IMAGE_SIGNATURES))


def sniff_document(body: bytes) -> DocumentType | None:
    """The document a body is by its content: ``%PDF-``, a zip package (Office Open XML,
    OpenDocument, EPUB), a compound file (XLS, DOC) or an image (PNG, JPEG, GIF, TIFF, WebP);
    None for anything else."""
    if body.startswith(b"%PDF-"):
        return PDF
    for signature, image in IMAGE_SIGNATURES:
        if body.startswith(signature):
            return image
    if body[:4] == b"RIFF" and body[8:12] == b"WEBP":
        return WEBP
    if body.startswith(RTF_START):
        return RTF
    if body.startswith(ZIP):
        return _sniff_zip(body)
    if body.startswith(OLE):
        for stream, kind in _OLE_STREAMS.items():
            if stream in body:
                return kind
    return None


def _sniff_zip(body: bytes) -> DocumentType | None:
    name_length = int.from_bytes(body[26:28], "little")
    if body[30 : 30 + name_length] == _MIMETYPE_PART:
        start = 30 + name_length + int.from_bytes(body[28:30], "little")
        declared = body[start : start + 60].split(b"PK", 1)[0].decode("ascii", "replace").strip()
        kind = BY_MEDIA_TYPE.get(declared)
        return kind if kind in (ODT, ODS, EPUB) else None
    start, end = _central_directory(body)
    return next(
        (kind for part, kind in _OOXML_PARTS.items() if _listed(body, part, start, end)), None
    )


_END = b"PK\x05\x06"  # the end of a zip's central directory
_ENTRY = b"PK\x01\x02"  # an entry of it: 46 bytes, then the name
_END_ROOM = 22 + 0xFFFF  # the end record and its comment, at most
_TRIES = 16  # places a part's name is looked at before the body is taken for no such package


def _central_directory(body: bytes) -> tuple[int, int]:
    """Where the zip's central directory lies (the whole body when its end says nothing
    usable: a zip64, a damaged one)."""
    at = body.rfind(_END, max(0, len(body) - _END_ROOM))
    if at < 0:
        return 0, len(body)
    size = int.from_bytes(body[at + 12 : at + 16], "little")
    offset = int.from_bytes(body[at + 16 : at + 20], "little")
    if offset + size > at:
        return 0, at
    return offset, offset + size


def _listed(body: bytes, name: bytes, start: int, end: int) -> bool:
    """Whether an entry of the central directory between ``start`` and ``end`` is named
    ``name``. Byte searches, not a parse: ``zipfile`` reads every entry in Python (a 20 MiB
    body of 446,000 entries, 60 KiB gzipped, held an event loop ~3 s); this is linear in the
    directory at memchr's speed, and looks at :data:`_TRIES` places at most."""
    at = body.find(name, start, end)
    for _ in range(_TRIES):
        if at < 0:
            return False
        entry = at - 46
        if (
            entry >= start
            and body[entry : entry + 4] == _ENTRY
            and int.from_bytes(body[entry + 28 : entry + 30], "little") == len(name)
        ):
            return True
        at = body.find(name, at + 1, end)
    return False
