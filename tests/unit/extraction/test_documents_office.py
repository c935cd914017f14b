"""Office documents read into markdown, text and metadata (extraction/documents): Word, Excel
(XLSX, XLS, ODS), PowerPoint, OpenDocument text, RTF and EPUB, on real files (tests/data/
documents: their README says where from), recognised by their type or their content, and each
kind of broken file or bomb failing that document alone with its reason."""

from __future__ import annotations

import io
import sys
import zipfile
from pathlib import Path

import pytest

from scrapejobs_shared.extraction import ContentKind, UnsupportedContent, extract_page
from scrapejobs_shared.extraction.content_kind import classify_content
from scrapejobs_shared.extraction.document_types import DOCX, EPUB, ODS, ODT, PPTX, XLS, XLSX
from scrapejobs_shared.extraction.documents import (
    DocumentOptions,
    DocumentUnreadable,
    read_document,
)
from scrapejobs_shared.extraction.documents.containers import MAX_PARTS, MAX_UNPACKED
from support.document_bombs import entry_bomb_zip

FILES = Path(__file__).resolve().parents[2] / "data" / "documents"
URL = "https://docs.e.test/file"


def _read(name: str) -> bytes:
    return (FILES / name).read_bytes()


def _markdown(name: str, **options: object) -> str:
    found = extract_page(
        _read(name),
        content_type="application/octet-stream",  # recognised by their content
        url=URL,
        formats=["markdown"],
        documents=DocumentOptions(**options),  # type: ignore[arg-type]
    )
    assert found.content_kind is ContentKind.DOCUMENT, found.errors
    return str(found.data["markdown"])


def test_a_word_file_keeps_its_headings_paragraphs_and_metadata_and_leaves_images_out() -> None:
    markdown = _markdown("markitdown-paper.docx")
    assert markdown.startswith(
        "AutoGen: Enabling Next-Gen LLM Applications via Multi-Agent Conversation"
    )
    for expected in (
        "# Abstract",
        "# Introduction",
        "## d666f1f7-46cb-42bd-9a39-9a39cf2a509f",
        "314b0a30-5b04-470b-b9f7-eed2c2bec74a",
        "49e168b7-d2ae-407f-a055-2167576f39a1",
    ):
        assert expected in markdown
    assert markdown.index("# Abstract") < markdown.index("# Introduction")
    assert "data:image" not in markdown and "base64" not in markdown
    document = read_document(DOCX.media_type, _read("markitdown-paper.docx"), DocumentOptions())
    assert document.metadata["author"] == "Adam Fourney"
    assert document.metadata["created"] == "2024-03-15T05:45:00Z"


@pytest.mark.parametrize("name", ["markitdown-sheets.xlsx", "markitdown-sheets.xls"])
def test_each_sheet_is_a_table_under_its_name(name: str) -> None:
    markdown = _markdown(name, page_markers=True)
    assert markdown.startswith(
        "## Sheet1\n\n| Alpha | Beta | Gamma | Delta |\n| --- | --- | --- | --- |\n| 89 | 82 |"
    )
    assert "| 58 | 6ff4173b-42a5-4784-9b19-f49caff4d93d | 22 | 9 |" in markdown
    assert "\n\n---\n\n<!-- page 2 -->\n\n## 09060124-b5e7-4717-9d07-3c046eb" in markdown
    assert "affc7dad-52dc-4b98-9b5d-51e65d8a8ad0" in markdown
    kind = XLSX if name.endswith("x") else XLS
    document = read_document(kind.media_type, _read(name), DocumentOptions(max_pages=1))
    assert document.page_count == 2 and len(document.pages) == 1 and document.truncated
    assert document.metadata["sheets"] == ["Sheet1", "09060124-b5e7-4717-9d07-3c046eb"]


def test_an_opendocument_spreadsheet_is_read_like_excel() -> None:
    content = (
        '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"'
        ' xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"'
        ' xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2">'
        '<office:body><office:spreadsheet><table:table table:name="Prices">'
        '<table:table-row><table:table-cell office:value-type="string"><text:p>Item</text:p>'
        '</table:table-cell><table:table-cell office:value-type="string"><text:p>Price | EUR'
        "</text:p></table:table-cell></table:table-row>"
        '<table:table-row><table:table-cell office:value-type="string"><text:p>Tea</text:p>'
        '</table:table-cell><table:table-cell office:value-type="float" office:value="2.5">'
        "<text:p>2.5</text:p></table:table-cell></table:table-row>"
        "</table:table></office:spreadsheet></office:body></office:document-content>"
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as package:
        package.writestr("mimetype", ODS.media_type, compress_type=zipfile.ZIP_STORED)
        package.writestr("content.xml", content, compress_type=zipfile.ZIP_DEFLATED)
        manifest = '<manifest xmlns="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"/>'
        package.writestr("META-INF/manifest.xml", manifest)
    assert classify_content(None, buffer.getvalue()).media_type == ODS.media_type
    found = extract_page(buffer.getvalue(), content_type=None, url=URL, formats=["markdown"])
    assert (
        found.data["markdown"]
        == "## Prices\n\n| Item | Price \\| EUR |\n| --- | --- |\n| Tea | 2.5 |"
    )


def test_slides_are_pages_with_their_titles_text_tables_and_notes_in_order() -> None:
    markdown = _markdown("markitdown-deck.pptx", page_markers=True)
    assert markdown.startswith(
        "## AutoGen: Enabling Next-Gen LLM Applications via Multi-Agent Conversation\n\nQingyun Wu"
    )
    assert markdown.count("AutoGen: Enabling Next-Gen LLM Applications via Multi-Agent") == 1
    for expected in (
        "## 2cdda5c8-e50e-4db4-b5f0-9722a649f455",
        "04191ea8-5c73-4215-a1d3-1cfb43aaaf12",
        "### a3f6004b-6f4f-4ea8-bee3-3741f4dc385f",  # a chart's title, then its data
        "| 2003 |",
        "| 7 | 8 | 9 | 1b92870d-e3b5-4e65-8153-919f4ff45592 | 11 | 12 |",
        "<!-- page 6 -->",
    ):
        assert expected in markdown
    document = read_document(PPTX.media_type, _read("markitdown-deck.pptx"), DocumentOptions())
    assert document.page_count == 6 and document.metadata["author"] == "Adam Fourney"
    assert "44bf7d06" not in markdown  # a picture's description: pictures are left out


def test_an_opendocument_text_keeps_its_heading_and_paragraphs() -> None:
    markdown = _markdown("libreoffice-form.odt")
    assert markdown.startswith("Example for a Form")
    assert "Gender:" in markdown and "Nationality:" in markdown
    document = read_document(ODT.media_type, _read("libreoffice-form.odt"), DocumentOptions())
    assert str(document.metadata["created"]).startswith("2022-06-26T10:36:59")


def test_an_epub_is_its_chapters_in_reading_order_with_the_books_metadata() -> None:
    markdown = _markdown("markitdown-book.epub")
    for expected in (
        "# Chapter 1: Test Content",
        "This is a **test** paragraph with some formatting",
        "- A bullet point\n- Another point",
        "# Chapter 2: More Content",
        "*different* style",
        "> This is a blockquote for testing",
    ):
        assert expected in markdown
    assert markdown.index("Chapter 1: Test") < markdown.index("Chapter 2: More")
    document = read_document(EPUB.media_type, _read("markitdown-book.epub"), DocumentOptions())
    assert "This is a blockquote for testing." in document.text  # XHTML's text, too
    assert document.metadata["author"] == "Test Author"
    assert document.metadata["title"] == "Test EPUB Document" and document.page_count == 3


def test_rtf_is_its_text_as_paragraphs() -> None:
    markdown = _markdown("markitdown-sample.rtf")
    assert markdown == (
        "This is a Sample RTF File\n\nIt is included to test if the MarkItDown sample plugin "
        "can correctly convert RTF files."
    )


def test_a_word_97_file_is_refused_saying_what_to_do() -> None:
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 100 + "WordDocument".encode("utf-16-le")
    with pytest.raises(UnsupportedContent, match=r"Word 97-2003 \(DOC\) files are not read"):
        extract_page(ole, content_type="application/msword", url=URL, formats=["markdown"])


def _zip(parts: dict[str, bytes], *, declared: int | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        for name, data in parts.items():
            package.writestr(name, data)
    return buffer.getvalue()


def test_zip_bombs_and_broken_packages_fail_that_document_alone_with_their_reason() -> None:
    word_parts = {"[Content_Types].xml": b"<Types/>", "word/document.xml": b"<w:document/>"}
    many = _zip(word_parts | {f"x/{n}": b"" for n in range(MAX_PARTS + 1)})
    with pytest.raises(DocumentUnreadable, match=r"holds 10,003 parts, more than 10,000"):
        read_document(DOCX.media_type, many, DocumentOptions())
    huge = _zip(word_parts | {"word/media/zeros.bin": b"\0" * (MAX_UNPACKED + 1)})
    assert len(huge) < 1_000_000  # a quarter of a gigabyte in under a megabyte
    with pytest.raises(DocumentUnreadable, match=r"unpacks to 268,435,4\d\d bytes.*zip bomb"):
        read_document(DOCX.media_type, huge, DocumentOptions())
    broken = _read("markitdown-paper.docx")[:5000]
    with pytest.raises(DocumentUnreadable, match=r"the Word \(DOCX\) file cannot be read"):
        read_document(DOCX.media_type, broken, DocumentOptions())
    with pytest.raises(DocumentUnreadable, match=r"the Excel \(XLSX\) file cannot be read"):
        read_document(XLSX.media_type, _zip({"xl/workbook.xml": b"<not"}), DocumentOptions())
    entities = (
        b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaaaaaaaa">'
        b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><d>&b;</d>'
    )
    odt = _zip({"mimetype": ODT.media_type.encode(), "content.xml": entities})
    found = read_document(ODT.media_type, odt, DocumentOptions())
    assert "aaaa" not in found.markdown  # entities are never expanded


@pytest.mark.parametrize("part", ["word/document.xml", "word/styles.xml", "[Content_Types].xml"])
def test_a_word_file_with_a_malformed_part_is_unreadable_not_an_error_of_ours(part: str) -> None:
    """The review: mammoth's XML parser raised ``ExpatError``, untyped (retried as
    internal_error; an upload mislabelled extraction_timeout)."""
    source = zipfile.ZipFile(io.BytesIO(_read("markitdown-paper.docx")))
    parts = {name: source.read(name) for name in source.namelist()}
    broken = _zip(parts | {part: b"<w:document><unclosed"})
    with pytest.raises(DocumentUnreadable, match=r"the Word \(DOCX\) file cannot be read"):
        read_document(DOCX.media_type, broken, DocumentOptions())


def test_a_document_is_recognised_by_its_content_whatever_its_declared_type() -> None:
    for name, kind in [
        ("markitdown-paper.docx", DOCX),
        ("markitdown-sheets.xlsx", XLSX),
        ("markitdown-sheets.xls", XLS),
        ("markitdown-deck.pptx", PPTX),
        ("libreoffice-form.odt", ODT),
        ("markitdown-book.epub", EPUB),
    ]:
        for declared in (None, "application/octet-stream", "application/zip", "text/html"):
            found = classify_content(declared, _read(name))
            assert (found.kind, found.media_type) == (ContentKind.DOCUMENT, kind.media_type)
    plain_zip = _zip({"a.txt": b"hello"})
    assert classify_content("application/zip", plain_zip).kind is ContentKind.UNSUPPORTED
    assert classify_content(None, b"{\\rtf1\\ansi hello}").media_type == "application/rtf"
    assert classify_content(None, b'{"json": true}').kind is ContentKind.JSON


def test_a_zip_of_446000_entries_is_sniffed_without_reading_them() -> None:
    """The review's 20 MiB body (60 KiB gzipped): ``zipfile`` read every entry in Python (~3 s
    of the worker's event loop a page); the sniff looks its names up with byte searches: a
    bounded number of Python calls whatever the directory holds."""
    bomb = entry_bomb_zip()
    calls = 0

    def counted(frame: object, event: str, arg: object) -> None:
        nonlocal calls
        calls += event == "call"

    sys.setprofile(counted)
    try:
        found = classify_content("application/zip", bomb)
    finally:
        sys.setprofile(None)
    assert found.kind is ContentKind.UNSUPPORTED
    assert calls < 200
    # an Office part named in a package's directory still makes it that document
    word = _zip({"[Content_Types].xml": b"<Types/>", "word/document.xml": b"<w:document/>"})
    assert classify_content("application/zip", word).media_type == DOCX.media_type
    named_alike = _zip({"xword/document.xml": b"<x/>", "word/document.xml.bak": b"<x/>"})
    assert classify_content("application/zip", named_alike).kind is ContentKind.UNSUPPORTED


def test_a_csv_pages_markdown_is_a_table_and_its_text_the_body_as_served() -> None:
    found = extract_page(
        _read("markitdown-mskanji.csv"),
        content_type="text/csv; charset=cp932",
        url=URL,
        formats=["markdown", "text"],
    )
    assert found.data["markdown"] == (
        "| 名前 | 年齢 | 住所 |\n| --- | --- | --- |\n| 佐藤太郎 | 30 | 東京 |\n"
        "| 三木英子 | 25 | 大阪 |\n| 髙橋淳 | 35 | 名古屋 |"
    )
    assert str(found.data["text"]).startswith("名前,年齢,住所\r\n")
    semicolons = extract_page(b"a;b\n1;2\n", content_type="text/csv", url=URL, formats=["markdown"])
    assert semicolons.data["markdown"] == "| a | b |\n| --- | --- |\n| 1 | 2 |"
    prose = b"one line of text\nand another, with a comma\n"
    ragged = extract_page(prose, content_type="text/csv", url=URL, formats=["markdown"])
    assert ragged.data["markdown"] == prose.decode()  # not a table: the text as it is


def test_a_job_reads_only_the_kinds_of_document_it_names() -> None:
    only_pdf = DocumentOptions(kinds=frozenset({"pdf"}))
    with pytest.raises(UnsupportedContent, match=r"documents.kinds leaves docx out"):
        extract_page(_read("markitdown-paper.docx"), content_type=None, url=URL, documents=only_pdf)
    pdf = extract_page(
        _read("libre-office-link.pdf"), content_type=None, url=URL, formats=["markdown"],
        documents=only_pdf,
    )  # fmt: skip
    assert pdf.data["markdown"] == "This is a link to an awesome blog."
