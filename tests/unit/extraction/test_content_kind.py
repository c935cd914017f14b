"""Content classification by Content-Type, with sniffing when it is missing."""

from __future__ import annotations

import pytest

from scrapejobs_shared.extraction import ContentKind, MediaType, classify_content

PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
OGG = b"OggS\x00\x02\x00\x00"


@pytest.mark.parametrize(
    ("content_type", "kind"),
    [
        ("text/html; charset=utf-8", ContentKind.HTML),
        ("TEXT/HTML", ContentKind.HTML),
        ("application/xhtml+xml", ContentKind.HTML),
        ("application/xml", ContentKind.XML),
        ("text/xml", ContentKind.XML),
        ("application/rss+xml", ContentKind.XML),
        ("application/atom+xml; charset=utf-8", ContentKind.XML),
        ("application/json", ContentKind.JSON),
        ("application/ld+json", ContentKind.JSON),
        ("application/problem+json", ContentKind.JSON),
        ("text/plain", ContentKind.TEXT),
        ("text/csv", ContentKind.TEXT),
        ("application/x-ndjson", ContentKind.TEXT),
        ("application/pdf", ContentKind.DOCUMENT),
        ("application/x-pdf", ContentKind.DOCUMENT),
        ("image/svg+xml", ContentKind.UNSUPPORTED),
        ("image/png", ContentKind.DOCUMENT),  # read by OCR
        ("image/jpeg", ContentKind.DOCUMENT),
        ("image/tiff", ContentKind.DOCUMENT),
        ("image/webp", ContentKind.DOCUMENT),
        ("image/gif", ContentKind.DOCUMENT),
        ("image/avif", ContentKind.UNSUPPORTED),
        ("audio/ogg", ContentKind.UNSUPPORTED),
        ("video/mp4", ContentKind.UNSUPPORTED),
        ("application/zip", ContentKind.UNSUPPORTED),
        ("application/vnd.ms-excel", ContentKind.DOCUMENT),
        (
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            ContentKind.DOCUMENT,
        ),
        ("application/msword", ContentKind.UNSUPPORTED),  # Word 97-2003: not read
        ("application/vnd.ms-powerpoint", ContentKind.UNSUPPORTED),
    ],
)
def test_declared_types(content_type: str, kind: ContentKind):
    assert classify_content(content_type, b"whatever body").kind is kind


def test_unsupported_reason_names_the_type():
    result = classify_content("audio/ogg", OGG)
    assert result.reason == "unsupported content type audio/ogg"


def test_binary_body_behind_a_textual_type_is_unsupported():
    result = classify_content("text/html", OGG)
    assert result.kind is ContentKind.UNSUPPORTED
    assert "declared text/html but the body is audio/ogg" in (result.reason or "")


@pytest.mark.parametrize(
    ("body", "media_type"),
    [
        (PNG, "image/png"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg"),
        (b"GIF89a\x01\x00", "image/gif"),
        (b"II*\x00\x08\x00", "image/tiff"),
        (b"MM\x00*\x00\x00", "image/tiff"),
        (b"RIFF\x10\x00\x00\x00WEBPVP8 ", "image/webp"),
    ],
)
@pytest.mark.parametrize("content_type", ["text/html", "application/octet-stream", None])
def test_an_image_is_a_document_whatever_it_is_declared(
    body: bytes, media_type: str, content_type: str | None
):
    """Read by OCR (documents/images.py), as a PDF is read whatever its declared type."""
    result = classify_content(content_type, body)
    assert result.kind is ContentKind.DOCUMENT and result.media_type == media_type


@pytest.mark.parametrize("content_type", ["application/pdf", "text/html", "application/x-pdf"])
def test_a_pdf_is_a_document_whatever_it_is_declared(content_type: str):
    result = classify_content(content_type, PDF)
    assert result.kind is ContentKind.DOCUMENT and result.media_type == "application/pdf"
    assert result.sniffed is (content_type == "text/html")  # x-pdf: one of PDF's own types


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        (b"  <!DOCTYPE html><html><body>x</body></html>", ContentKind.HTML),
        (b"<html><p>x</p></html>", ContentKind.HTML),
        (b"\xef\xbb\xbf<div>x</div>", ContentKind.HTML),
        (b'<?xml version="1.0"?><rss><channel/></rss>', ContentKind.XML),
        (b'<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"/>', ContentKind.HTML),
        (b"<urlset><url><loc>https://e.com/</loc></url></urlset>", ContentKind.XML),
        (b'{"a": 1}', ContentKind.JSON),
        (b"\n [1, 2]", ContentKind.JSON),
        (b"just some words", ContentKind.TEXT),
        (b"", ContentKind.HTML),
        (PDF, ContentKind.DOCUMENT),
        (PNG, ContentKind.DOCUMENT),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", ContentKind.DOCUMENT),
        (b"GIF89a\x01\x00", ContentKind.DOCUMENT),
        (OGG, ContentKind.UNSUPPORTED),
        (b"RIFF\x10\x00\x00\x00WAVEfmt ", ContentKind.UNSUPPORTED),
        (b"PK\x03\x04\x14\x00", ContentKind.UNSUPPORTED),
        (b"\x00\x01\x02binary\x03", ContentKind.UNSUPPORTED),
    ],
)
@pytest.mark.parametrize("content_type", [None, "", "application/octet-stream", "nonsense"])
def test_sniffing_when_the_type_is_missing_or_generic(
    body: bytes, kind: ContentKind, content_type: str | None
):
    result = classify_content(content_type, body)
    assert result.kind is kind
    assert result.sniffed


def test_utf16_text_with_bom_is_not_binary():
    assert classify_content(None, "<p>héllo</p>".encode("utf-16")).kind is ContentKind.HTML
    assert classify_content(None, "plain words".encode("utf-16")).kind is ContentKind.TEXT


def test_media_type_parsing():
    media = MediaType.parse('Text/HTML ; Charset="Shift_JIS" ; foo=bar')
    assert (media.essence, media.charset, media.parameters["foo"]) == (
        "text/html",
        "Shift_JIS",
        "bar",
    )
    assert MediaType.parse("garbage").essence == ""
    assert MediaType.parse(None).essence == ""
    joined = MediaType.parse("text/html; charset=koi8-r, text/html")
    assert (joined.essence, joined.charset) == ("text/html", "koi8-r")
