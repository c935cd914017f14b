"""Non-HTML content (JSON, text, XML, binary) and legacy charsets through extract_page."""

from __future__ import annotations

import pytest

from scrapejobs_shared.extraction import (
    ContentKind,
    FieldSpec,
    UnsupportedContent,
    extract_page,
)

URL = "https://api.example.com/v1/items"
FIELDS = {"title": FieldSpec(css="h1", default="none")}


def test_json_is_parsed_and_fields_report_the_mismatch():
    body = b'{"items": [{"id": 1, "name": "caf\xc3\xa9"}], "next": null}'
    result = extract_page(
        body, content_type="application/json", url=URL, fields=FIELDS, formats=["text", "links"]
    )
    assert result.content_kind is ContentKind.JSON
    assert result.data == {
        "json": {"items": [{"id": 1, "name": "café"}], "next": None},
        "title": "none",
        "text": body.decode(),
    }
    assert result.errors == {
        "title": "content is JSON, not HTML",
        "links": "content is JSON, not HTML",
    }


def test_sniffed_json_without_content_type():
    result = extract_page(b"  [1, 2, 3]", content_type=None, url=URL)
    assert (result.content_kind, result.data) == (ContentKind.JSON, {"json": [1, 2, 3]})


def test_declared_json_that_does_not_parse_is_unsupported():
    with pytest.raises(UnsupportedContent, match=r"^invalid JSON: .*looks like HTML"):
        extract_page(b"<html>502 Bad Gateway</html>", content_type="application/json", url=URL)
    with pytest.raises(UnsupportedContent, match="NaN is not valid JSON"):
        extract_page(b'{"x": NaN}', content_type="application/json", url=URL)


def test_sniffed_json_that_does_not_parse_is_text():
    result = extract_page(b"[INFO] server started", content_type=None, url=URL, formats=["text"])
    assert result.content_kind is ContentKind.TEXT
    assert result.data == {"text": "[INFO] server started"}


def test_plain_text_and_csv():
    csv = "name,price\nCafé,3.50\n".encode("cp1252")
    result = extract_page(
        csv,
        content_type="text/csv; charset=windows-1252",
        url=URL,
        fields=FIELDS,
        formats=["text", "metadata"],
    )
    assert result.content_kind is ContentKind.TEXT
    assert result.data == {"title": "none", "text": "name,price\nCafé,3.50\n"}
    assert result.errors == {
        "title": "content is text/csv, not HTML",
        "metadata": "content is text/csv, not HTML",
    }


def test_text_plain_field_error():
    result = extract_page(b"hello", content_type="text/plain", url=URL, fields=FIELDS)
    assert result.errors == {"title": "content is text/plain, not HTML"}
    assert result.charset is None  # not decoded: nothing asked for the text


@pytest.mark.parametrize(
    ("body", "content_type", "reason"),
    [
        (b"%PDF-1.4\n...", "application/pdf", "the PDF cannot be read"),
        (b"%PDF-1.4\n...", None, "the PDF cannot be read"),
        (b"%PDF-1.4\n...", "text/html", "the PDF cannot be read"),
        (b"\x89PNG\r\n\x1a\n....", "image/png", "the image cannot be read"),  # broken
        (b"OggS\x00....", "audio/ogg", "unsupported content type audio/ogg"),
        (b"\x00\x01\x02\x03", "application/octet-stream", "binary data without a content type"),
    ],
)
def test_unsupported_content_raises_with_a_reason(body, content_type, reason):
    with pytest.raises(UnsupportedContent) as caught:
        extract_page(body, content_type=content_type, url=URL, fields=FIELDS)
    assert reason in caught.value.reason


RSS = """<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel>
  <title>Example feed</title>
  <link>https://feed.example/</link>
  <item><title>First</title><link>https://feed.example/1</link><dc:creator>Ann</dc:creator>
    <media:content url="https://feed.example/1.jpg"/></item>
  <item><title>Second</title><link>https://feed.example/2</link><dc:creator>Bob</dc:creator></item>
</channel>
</rss>"""


def test_xml_feeds_use_an_xml_parser_without_namespaces():
    fields = {
        "channel": FieldSpec(css="channel > title"),
        "first_item": FieldSpec(css="item"),
        "items": FieldSpec.model_validate(
            {
                "css": "item",
                "items": {
                    "title": {"css": "title"},
                    "link": {"xpath": "link"},
                    "author": {"css": "creator"},
                    "image": {"css": "content::attr(url)"},
                },
            }
        ),
    }
    result = extract_page(
        RSS.encode(),
        content_type="application/rss+xml",
        url="https://feed.example/rss",
        fields=fields,
        formats=["links", "text"],
    )
    assert result.content_kind is ContentKind.XML
    assert result.data["channel"] == "Example feed"
    assert result.data["first_item"] == "First https://feed.example/1 Ann"
    assert result.data["items"] == [
        {
            "title": "First",
            "link": "https://feed.example/1",
            "author": "Ann",
            "image": "https://feed.example/1.jpg",
        },
        {"title": "Second", "link": "https://feed.example/2", "author": "Bob", "image": None},
    ]
    assert result.data["links"] == ["https://feed.example/1", "https://feed.example/2"]  # items'
    assert result.errors == {}
    assert str(result.data["text"]).splitlines()[:3] == [
        "Example feed",
        "https://feed.example/",
        "First",
    ]


WINDOWS_1252_PAGE = "<html><body><h1>Café crème</h1><p class=price>€ 4,50</p></body></html>"


def test_windows_1252_bytes_with_a_latin1_header():
    result = extract_page(
        WINDOWS_1252_PAGE.encode("cp1252"),
        content_type="text/html; charset=iso-8859-1",
        url=URL,
        fields={"name": FieldSpec(css="h1"), "price": FieldSpec(css=".price")},
    )
    assert result.data == {"name": "Café crème", "price": "€ 4,50"}
    assert result.charset == "cp1252"


def test_shift_jis_page_declared_by_meta():
    html = (
        '<html><head><meta charset="Shift_JIS"><title>価格表</title></head>'
        "<body><p class=item>りんご ― ５個</p></body></html>"
    )
    result = extract_page(
        html.encode("shift_jis"),
        content_type="text/html",
        url=URL,
        fields={"item": FieldSpec(css=".item")},
        formats=["metadata"],
    )
    assert result.data["item"] == "りんご ― ５個"
    assert result.data["metadata"]["title"] == "価格表"  # type: ignore[index,call-overload]


def test_koi8_r_header_overrides_a_wrong_meta():
    html = '<meta charset="utf-8"><h1>Новости дня</h1>'
    result = extract_page(
        html.encode("koi8-r"),
        content_type="text/html; charset=koi8-r",
        url=URL,
        fields={"h": FieldSpec(css="h1")},
    )
    assert result.data == {"h": "Новости дня"}


def test_euc_kr_and_gb2312_labels():
    korean = extract_page(
        "<h1>안녕하세요 똠방각하</h1>".encode("cp949"),
        content_type="text/html; charset=euc-kr",
        url=URL,
        fields={"h": FieldSpec(css="h1")},
    )
    assert korean.data == {"h": "안녕하세요 똠방각하"}  # 똠 exists only in cp949
    chinese = extract_page(
        '<meta charset="gb2312"><h1>中文 𠀀</h1>'.encode("gb18030"),
        content_type="text/html",
        url=URL,
        fields={"h": FieldSpec(css="h1")},
    )
    assert chinese.data == {"h": "中文 𠀀"}  # 𠀀 needs gb18030
