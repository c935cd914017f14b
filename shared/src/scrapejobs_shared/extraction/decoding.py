"""Fetched bytes to text: choosing the charset the way a browser would, then decoding.

Order of precedence (first that gives a known charset wins):

1. a byte-order mark (UTF-8, UTF-16 LE/BE). As in the WHATWG HTML and Encoding standards
   a BOM beats the Content-Type header: a page that starts with one was saved in that
   encoding, whatever the server claims;
2. the ``charset`` parameter of the Content-Type header;
3. for markup only: ``<meta charset>`` or ``<meta http-equiv="Content-Type" content="...;
   charset=...">`` in the first :data:`PRESCAN_BYTES` bytes (comments skipped; a UTF-16
   label there means UTF-8, as browsers do, since the bytes read as ASCII), then an XML
   declaration ``<?xml ... encoding="..."?>`` at the very start;
4. strict UTF-8, when the bytes are valid UTF-8 (a body cut mid-character by the fetch
   size cap still counts);
5. detection with charset-normalizer on the first :data:`DETECTION_SAMPLE_BYTES` bytes
   (when windows-1252 scores as well as the best guess it is preferred: it is the
   browsers' default for undeclared legacy pages, and Latin charsets often tie);
6. UTF-8 with replacement characters.

An unknown or unusable label at any step is skipped, never an error. Labels are mapped
as browsers map them (see :mod:`.charset_labels`): ``iso-8859-1`` decodes as windows-1252,
``gb2312`` as gb18030, ``shift_jis`` as cp932. Decoding itself never fails: undecodable
bytes become U+FFFD.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from charset_normalizer import from_bytes

from .charset_labels import UTF8, UTF16_CODECS, codec_for_label
from .media_type import MediaType

CharsetSource = Literal["bom", "header", "meta", "xml-declaration", "utf-8", "detected", "fallback"]

PRESCAN_BYTES = 4096
# Single-byte Latin charsets often score the same; browsers default to windows-1252.
_TIE_BREAKER = "cp1252"
DETECTION_SAMPLE_BYTES = 64 * 1024

_BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xfe\xff", "utf-16-be"),
    (b"\xff\xfe", "utf-16-le"),
)
_COMMENT = re.compile(rb"<!--.*?-->", re.DOTALL)
_META_TAG = re.compile(rb"<meta[\s/]([^>]*)", re.IGNORECASE)
_ATTRIBUTE = re.compile(
    rb"""([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]*)))?""",
)
_CONTENT_CHARSET = re.compile(rb"""charset\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s;"']+))""", re.I)
_XML_DECLARATION = re.compile(
    rb"""\s*<\?xml\s[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:\-]+)["']""",
)


@dataclass(frozen=True, slots=True)
class CharsetChoice:
    """The codec to decode a body with, where it came from, and the BOM bytes to skip."""

    codec: str
    source: CharsetSource
    bom_length: int = 0

    def decode(self, body: bytes) -> str:
        """Decode ``body`` with this choice; undecodable bytes become U+FFFD."""
        return body[self.bom_length :].decode(self.codec, "replace")


@dataclass(frozen=True, slots=True)
class DecodedText:
    text: str
    codec: str
    source: CharsetSource


def choose_charset(
    body: bytes, content_type: str | MediaType | None = None, *, markup: bool = True
) -> CharsetChoice:
    """Pick the codec for ``body`` (see the module docstring for the order).

    ``markup`` enables the in-document declarations (meta, XML declaration); pass ``False``
    for JSON and plain text.
    """
    bom = _bom_choice(body)
    if bom is not None:
        return bom
    media = content_type if isinstance(content_type, MediaType) else MediaType.parse(content_type)
    if media.charset is not None:
        codec = codec_for_label(media.charset)
        if codec is not None:
            return CharsetChoice(codec, "header")
    if markup:
        declared = _declared_in_document(body[:PRESCAN_BYTES])
        if declared is not None:
            return declared
    if _is_utf8(body):
        return CharsetChoice(UTF8, "utf-8")
    detected = _detected_codec(body[:DETECTION_SAMPLE_BYTES])
    if detected is not None:
        return CharsetChoice(detected, "detected")
    return CharsetChoice(UTF8, "fallback")


def decode_body(
    body: bytes, content_type: str | MediaType | None = None, *, markup: bool = True
) -> DecodedText:
    """Decode ``body`` to text with :func:`choose_charset`; never raises."""
    choice = choose_charset(body, content_type, markup=markup)
    return DecodedText(choice.decode(body), choice.codec, choice.source)


def _bom_choice(body: bytes) -> CharsetChoice | None:
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return CharsetChoice(codec, "bom", len(bom))
    return None


def _declared_in_document(head: bytes) -> CharsetChoice | None:
    if b"<" not in head:
        return None
    from_meta = _meta_charset(head)
    if from_meta is not None:
        return CharsetChoice(from_meta, "meta")
    xml = _XML_DECLARATION.match(head)
    if xml is not None:
        codec = codec_for_label(xml.group(1).decode("ascii"))
        if codec is not None:
            return CharsetChoice(_ascii_compatible(codec), "xml-declaration")
    return None


def _meta_charset(head: bytes) -> str | None:
    if b"<!--" in head:
        head = _COMMENT.sub(b"", head)
    for tag in _META_TAG.finditer(head):
        label = _meta_label(tag.group(1))
        if label is None:
            continue
        codec = codec_for_label(label)
        if codec is not None:
            return _ascii_compatible(codec)
    return None


def _meta_label(attributes: bytes) -> str | None:
    values: dict[bytes, bytes] = {}
    for match in _ATTRIBUTE.finditer(attributes):
        name = match.group(1).lower()
        if name not in values:
            values[name] = match.group(2) or match.group(3) or match.group(4) or b""
    charset = values.get(b"charset")
    if charset:
        return charset.decode("latin-1")
    if values.get(b"http-equiv", b"").strip().lower() != b"content-type":
        return None
    found = _CONTENT_CHARSET.search(values.get(b"content", b""))
    if found is None:
        return None
    return (found.group(1) or found.group(2) or found.group(3) or b"").decode("latin-1")


def _ascii_compatible(codec: str) -> str:
    """A UTF-16 label read from ASCII bytes is wrong by construction: use UTF-8."""
    return UTF8 if codec in UTF16_CODECS else codec


def _is_utf8(body: bytes) -> bool:
    try:
        body.decode(UTF8)
    except UnicodeDecodeError as exc:
        # A body cut by the fetch size cap may end in the middle of a character.
        return exc.reason == "unexpected end of data" and exc.end == len(body)
    return True


def _detected_codec(sample: bytes) -> str | None:
    matches = from_bytes(sample)
    best = matches.best()
    if best is None:
        return None
    tied = (m for m in matches if (m.chaos, m.coherence) == (best.chaos, best.coherence))
    if any(codec_for_label(match.encoding) == _TIE_BREAKER for match in tied):
        return _TIE_BREAKER
    return codec_for_label(best.encoding)
