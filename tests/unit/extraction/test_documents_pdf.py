"""PDF documents read into markdown, text and metadata (extraction/documents), on real files
(tests/data/documents: their README says where from and what each tests)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any, cast

import pytest

from scrapejobs_devstack.demo_site.pdf_writer import pdf_of, simple_pdf
from scrapejobs_devstack.demo_site.scan_writer import ScanPage
from scrapejobs_devstack.demo_site.scan_writer import text_pdf as scan_text_pdf
from scrapejobs_shared.extraction import ContentKind, FieldSpec, UnsupportedContent, extract_page
from scrapejobs_shared.extraction.documents import (
    UNREAD_MAX_BYTES,
    DocumentOptions,
    DocumentUnreadable,
    read_document,
)
from scrapejobs_shared.extraction.documents.page_lines import Line, page_markdown
from support.document_bombs import page_bomb_pdf

FILES = Path(__file__).resolve().parents[2] / "data" / "documents"
PDF = "application/pdf"
URL = "https://docs.e.test/report.pdf"


def _read(name: str) -> bytes:
    return (FILES / name).read_bytes()


def test_a_title_in_a_larger_font_is_a_heading_and_the_paragraphs_follow_in_order() -> None:
    document = read_document(PDF, _read("google-doc-document.pdf"), DocumentOptions())
    markdown = document.markdown
    assert markdown.startswith("# Example document\n\nBeautiful is better than ugly.")
    lines = ["Beautiful is better than ugly.", "Readability counts.", "Now is better than never."]
    assert [markdown.index(line) for line in lines] == sorted(markdown.index(x) for x in lines)
    assert document.metadata["title"] == "PDF Example Document"
    assert document.metadata["page_count"] == 1 and document.page_count == 1


def test_headings_of_several_sizes_hyphenated_words_and_the_files_dates() -> None:
    document = read_document(PDF, _read("multicolumn.pdf"), DocumentOptions())
    markdown = document.markdown
    assert markdown.startswith("# Two-Column Document with Lorem Ipsum")
    assert "\n\n## Abstract\n\n" in markdown
    assert "consectetuer adipiscing elit" in markdown  # hyphenated across a line in the file
    assert "\ufffe" not in markdown and "\ufffe" not in document.text
    assert document.metadata["created"] == "2024-01-03T09:38:26+01:00"
    assert document.metadata["producer"] == "pdfTeX-1.40.21"


def test_pages_joined_by_page_markers_and_cut_at_the_page_limit() -> None:
    data = _read("pdflatex-4-pages.pdf")
    document = read_document(PDF, data, DocumentOptions(page_markers=True))
    assert [p.number for p in document.pages] == [1, 2, 3, 4]
    markdown = document.markdown
    for number in (2, 3, 4):
        assert f"\n\n---\n\n<!-- page {number} -->\n\n" in markdown
    assert "<!-- page 1 -->" not in markdown and not document.truncated
    first_two = read_document(PDF, data, DocumentOptions(max_pages=2))
    assert len(first_two.pages) == 2 and first_two.page_count == 4 and first_two.truncated
    assert "<!-- page" not in first_two.markdown


def test_a_password_protected_or_broken_pdf_is_a_typed_failure() -> None:
    with pytest.raises(DocumentUnreadable, match="password-protected"):
        read_document(PDF, _read("libreoffice-writer-password.pdf"), DocumentOptions())
    with pytest.raises(DocumentUnreadable, match="cannot be read"):
        read_document(PDF, b"%PDF-1.7\nnot really a PDF", DocumentOptions())
    with pytest.raises(UnsupportedContent, match="password-protected"):
        extract_page(_read("libreoffice-writer-password.pdf"), content_type=PDF, url=URL)


def test_a_pdf_job_gets_markdown_text_and_metadata_and_errors_for_the_rest() -> None:
    extraction = extract_page(
        _read("google-doc-document.pdf"),
        content_type="application/octet-stream",  # sniffed: the body is a PDF
        url=URL,
        fields={"title": FieldSpec(css="h1", default="none")},
        formats=["markdown", "text", "metadata", "images"],
    )
    assert extraction.content_kind is ContentKind.DOCUMENT and not extraction.empty
    assert str(extraction.data["markdown"]).startswith("# Example document")
    assert "Beautiful is better than ugly." in str(extraction.data["text"])
    metadata = extraction.data["metadata"]
    assert isinstance(metadata, dict)
    assert metadata["title"] == "PDF Example Document" and metadata["url"] == URL
    assert metadata["content_type"] == PDF
    assert extraction.errors["title"] == "content is application/pdf, not HTML"
    assert extraction.data["title"] == "none"
    assert extraction.errors["images"] == "content is application/pdf, not HTML"


def test_the_page_limit_is_said_in_the_errors() -> None:
    extraction = extract_page(
        _read("pdflatex-4-pages.pdf"),
        content_type=PDF,
        url=URL,
        formats=["markdown"],
        documents=DocumentOptions(max_pages=1),
    )
    assert extraction.errors["document"] == "pages past 1 of 4 left unread (the limit)"


def test_bullets_and_numbers_start_list_items_and_a_short_line_ends_a_paragraph() -> None:
    long = "a line of a paragraph long enough to be one of the page's full lines of text"
    lines = [
        Line("Steps", 16.0),
        Line(long, 10.0),
        Line("and its short end.", 10.0),
        Line(f"• first item: {long}", 10.0),
        Line("to a second line", 10.0),
        Line("2) second item", 10.0),
        Line("# not a heading: a line starting as markdown would read it", 10.0),
    ]
    markdown = page_markdown(lines, {16.0: 1})
    assert markdown.split("\n\n") == [
        "# Steps",
        f"{long} and its short end.",
        f"- first item: {long} to a second line",
        "2. second item",
        "\\# not a heading: a line starting as markdown would read it",
    ]


def test_the_pages_format_gives_each_page_read_and_only_a_document_has_pages() -> None:
    extraction = extract_page(
        _read("pdflatex-4-pages.pdf"),
        content_type=PDF,
        url=URL,
        formats=["pages", "markdown"],
        documents=DocumentOptions(max_pages=3),
    )
    pages = cast(list[dict[str, Any]], extraction.data["pages"])
    assert [p["page_number"] for p in pages] == [1, 2, 3]
    assert all(p["markdown"] and p["markdown"] in str(extraction.data["markdown"]) for p in pages)
    html = extract_page(b"<p>hi</p>", content_type="text/html", url=URL, formats=["pages"])
    assert html.errors["pages"] == "content is text/html, not a document (PDF)"
    assert "pages" not in html.data


def test_a_document_not_read_is_answered_as_base64_whole_or_fails_saying_why() -> None:
    data = _read("google-doc-document.pdf")
    unread = DocumentOptions(read=False)
    extraction = extract_page(
        data,
        content_type=PDF,
        url=URL,
        formats=["markdown", "metadata", "text"],
        fields={"title": FieldSpec(css="h1")},
        documents=unread,
    )
    assert base64.b64decode(str(extraction.data["markdown"])) == data
    assert extraction.data["metadata"] == {"url": URL, "content_type": PDF}
    assert extraction.errors["text"] == "the application/pdf document was not read (documents.read)"
    assert extraction.errors["title"] == "content is application/pdf, not HTML"
    assert extraction.content_kind is ContentKind.DOCUMENT and not extraction.empty
    big = data + b"\n" * (UNREAD_MAX_BYTES // 2)  # fits one format, not two
    assert extract_page(big, content_type=PDF, url=URL, formats=["markdown"], documents=unread)
    with pytest.raises(UnsupportedContent, match=r"at most 300,000 bytes in markdown, html"):
        extract_page(big, content_type=PDF, url=URL, formats=["markdown", "html"], documents=unread)


def test_a_pdfs_links_are_its_link_annotations_and_the_urls_its_text_spells_out() -> None:
    found = extract_page(
        _read("libre-office-link.pdf"), content_type=PDF, url=URL, formats=["links"]
    )
    assert found.data["links"] == ["https://martin-thoma.com/"]  # a link annotation
    made = simple_pdf(
        ["See https://shop.e.test/tea for prices.", "Or the index (../index.html)."],
        ["https://shop.e.test/about", "relative/page.html", "mailto:someone@e.test"],
    )
    links = extract_page(made, content_type=PDF, url=URL, formats=["links"]).data["links"]
    # absolute http(s) links only: a document's own references are not a site's pages
    assert links == ["https://shop.e.test/about", "https://shop.e.test/tea"]


def test_a_page_bomb_fails_saying_so_and_many_pages_are_read_up_to_the_limit() -> None:
    with pytest.raises(DocumentUnreadable, match=r"150,000 pages, more than 100,000 \(a page bomb"):
        read_document(PDF, page_bomb_pdf(150_000), DocumentOptions())
    many = read_document(PDF, page_bomb_pdf(3_000), DocumentOptions(max_pages=50))
    assert many.page_count == 3_000 and len(many.pages) == 50


def test_an_image_declared_huge_costs_nothing_to_a_text_read() -> None:
    # an image XObject of 100,000 x 100,000 pixels: text extraction never decodes it
    content = b"BT /F1 12 Tf 72 720 Td (Caption) Tj ET q 612 0 0 792 0 0 cm /Im1 Do Q"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> /XObject << /Im1 6 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /XObject /Subtype /Image /Width 100000 /Height 100000 /ColorSpace "
        b"/DeviceRGB /BitsPerComponent 8 /Length 4 >>\nstream\nabcd\nendstream",
    ]
    assert read_document(PDF, pdf_of(objects), DocumentOptions()).markdown == "Caption"


def test_running_headers_footers_and_page_numbers_are_left_out_and_headings_stay() -> None:
    """As in a spec rendered to PDF (freedesktop's shared-mime-info: its title atop every page
    and its number below), read with its text layer."""
    pages = [
        ScanPage(
            [f"Paragraph {n} of the specification says what a reader reads on page {n}."],
            heading=f"Section {n}",
            header="Shared MIME-info Database",
            number=n,
        )
        for n in range(1, 5)
    ]
    document = read_document(PDF, scan_text_pdf(pages), DocumentOptions(page_markers=True))
    markdown = document.markdown
    assert "Shared MIME-info Database" not in markdown
    for n in range(1, 5):
        assert f"# Section {n}\n\nParagraph {n} of the specification" in markdown
    assert not [line for line in markdown.splitlines() if line.strip().isdigit()]
    alone = read_document(PDF, scan_text_pdf(pages[:1]), DocumentOptions())
    assert "Shared MIME-info Database" in alone.markdown  # one page: nothing runs


def test_a_table_of_contents_loses_its_dot_leaders() -> None:
    contents = [
        "1 Introduction . . . . . . . . . . . . . . . . . . . . 1",
        "2 Unified system ........................................ 3",
        "2.1 Directory layout . . . . . . . . . . . . . . . . . . . 4",
    ]
    document = read_document(PDF, simple_pdf(["Contents", *contents]), DocumentOptions())
    assert "1 Introduction — 1\n\n2 Unified system — 3\n\n2.1 Directory layout — 4" in (
        document.markdown
    )
    assert ". . ." not in document.text and "...." not in document.text
