"""Zip packages (Office Open XML, OpenDocument, EPUB) opened with their bombs refused: too many
parts, or parts unpacking to far more than a document holds, fail the document before any part
is read; a part is read at most to the size the package declares for it (``zipfile`` checks),
and XML parts are parsed without entities or network access."""

from __future__ import annotations

import io
import zipfile
from typing import Any

from lxml import etree  # type: ignore[import-untyped]
from pydantic import JsonValue

from .document import DocumentUnreadable

MAX_PARTS = 10_000
MAX_UNPACKED = 256 << 20  # bytes all parts together may unpack to
ENCRYPTED = 0x1  # a zip entry's flag bit: encrypted
_XML = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, recover=False)


def open_package(data: bytes, label: str) -> zipfile.ZipFile:
    """``data`` as a zip package, its size checked; :class:`DocumentUnreadable` for a broken,
    encrypted or bomb-like one."""
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
        parts = package.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise DocumentUnreadable(f"the {label} file cannot be read: {exc}") from None
    if len(parts) > MAX_PARTS:
        raise DocumentUnreadable(
            f"the {label} file holds {len(parts):,} parts, more than {MAX_PARTS:,} (a zip bomb?)"
        )
    unpacked = sum(part.file_size for part in parts)
    if unpacked > MAX_UNPACKED:
        raise DocumentUnreadable(
            f"the {label} file unpacks to {unpacked:,} bytes, more than {MAX_UNPACKED:,} "
            "(a zip bomb?)"
        )
    if any(part.flag_bits & ENCRYPTED for part in parts):
        raise DocumentUnreadable(f"the {label} file is password-protected")
    return package


def read_part(package: zipfile.ZipFile, name: str, label: str) -> bytes | None:
    """The part ``name`` (None when the package has none)."""
    try:
        return package.read(name)
    except KeyError:
        return None
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
        raise DocumentUnreadable(f"the {label} file cannot be read: {name}: {exc}") from None


def parse_xml(data: bytes, label: str) -> Any:
    """An XML part's root (entities left unresolved, nothing fetched)."""
    try:
        return etree.fromstring(data, _XML)
    except etree.XMLSyntaxError as exc:
        raise DocumentUnreadable(f"the {label} file cannot be read: {exc}") from None


def local(tag: object) -> str:
    """An element's tag without its namespace (``""`` for comments and the like)."""
    return etree.QName(tag).localname if isinstance(tag, str) else ""


# Office Open XML's core properties (docProps/core.xml), by the names metadata gives them
_CORE = {
    "title": "title",
    "creator": "author",
    "description": "description",
    "subject": "subject",
    "keywords": "keywords",
    "created": "created",
    "modified": "modified",
}


def core_properties(package: zipfile.ZipFile, label: str) -> dict[str, JsonValue]:
    """What an Office Open XML file says of itself: title, author, dates..."""
    return dublin_core(read_part(package, "docProps/core.xml", label), label, _CORE)


def dublin_core(data: bytes | None, label: str, names: dict[str, str]) -> dict[str, JsonValue]:
    """The elements of ``data`` named in ``names`` (by local name), each its text, once."""
    found: dict[str, JsonValue] = {}
    if data is None:
        return found
    for element in parse_xml(data, label).iter():
        name = names.get(local(element.tag))
        text = (element.text or "").strip()
        if name is not None and text and name not in found:
            found[name] = text
    return found
