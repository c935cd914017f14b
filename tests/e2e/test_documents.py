"""Documents on the real stack: a job over the test site's files (PDF, Word, Excel...) gets
each one's markdown and metadata under the job's ``documents`` options, and a password-protected
one fails alone, with its reason, while the others succeed; Firecrawl's own SDK (firecrawl-py,
unmodified) scrapes a PDF with ``parsers`` (pages, page markers, a page limit), uploads a Word
and an Excel file to ``parse`` and lists ``get_parse_formats()``; the native upload
``POST /v1/parse`` keeps its result as a job."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from firecrawl import Firecrawl
from firecrawl.v2.types import PDFParser
from firecrawl.v2.utils.error_handler import BadRequestError

from scrapejobs_devstack.demo_site.pdf_writer import simple_pdf
from support.document_bombs import flate_bomb_pdf, page_bomb_pdf
from support.jobs import all_results, steady_async, submit, usage_after, wait_finished
from support.scans import scan_files, scan_pages, word_f1
from support.site import Site

FILES = Path(__file__).resolve().parents[1] / "data" / "documents"

pytestmark = [pytest.mark.emulators, pytest.mark.stack]


async def test_a_job_of_pdfs_reads_each_one_under_its_documents_options(api, site) -> None:
    names = ["google-doc-document.pdf", "pdflatex-4-pages.pdf", "libreoffice-writer-password.pdf"]
    urls = [f"{site.url}/files/{name}" for name in names]
    options = {
        "formats": ["markdown", "metadata"],
        "documents": {"max_pages": 2, "page_markers": True},
    }
    job = await submit(api, {"urls": urls, "options": options})
    final = await wait_finished(api, job["id"])
    assert final["counts"]["succeeded"] == 2 and final["counts"]["failed"] == 1

    results = {r["url"].rsplit("/", 1)[1]: r for r in await all_results(api, job["id"])}
    google = results["google-doc-document.pdf"]
    assert google["status"] == "succeeded", google
    assert google["data"]["markdown"].startswith("# Example document\n\nBeautiful is better")
    assert google["data"]["metadata"]["title"] == "PDF Example Document"
    assert google["data"]["metadata"]["content_type"] == "application/pdf"

    four = results["pdflatex-4-pages.pdf"]
    assert four["status"] == "succeeded", four
    assert "\n\n---\n\n<!-- page 2 -->\n\n" in four["data"]["markdown"]
    assert "<!-- page 3 -->" not in four["data"]["markdown"]  # max_pages: 2
    assert four["data"]["metadata"]["page_count"] == 4
    assert four["field_errors"] == {"document": "pages past 2 of 4 left unread (the limit)"}

    locked = results["libreoffice-writer-password.pdf"]
    assert locked["status"] == "failed"
    assert locked["error"] == "unsupported_content: the PDF is password-protected"


async def test_a_documents_option_out_of_bounds_is_refused_naming_it(api) -> None:
    body = {"urls": ["https://example.com/a.pdf"], "options": {"documents": {"max_pages": 0}}}
    response = await api.post("/v1/jobs", json=body)
    assert response.status_code == 422, response.text
    assert "max_pages" in response.text


async def test_office_files_in_a_job_are_read_by_their_type(api, site) -> None:
    names = ["markitdown-paper.docx", "markitdown-sheets.xlsx", "markitdown-deck.pptx"]
    options = {"formats": ["markdown"]}
    job = await submit(api, {"urls": [f"{site.url}/files/{n}" for n in names], "options": options})
    final = await wait_finished(api, job["id"])
    results = {r["url"].rsplit("/", 1)[1]: r for r in await all_results(api, job["id"])}
    assert final["counts"]["succeeded"] == 3, {n: r["error"] for n, r in results.items()}
    assert "# Abstract" in results["markitdown-paper.docx"]["data"]["markdown"]
    sheets = results["markitdown-sheets.xlsx"]["data"]["markdown"]
    assert sheets.startswith("## Sheet1\n\n| Alpha | Beta | Gamma | Delta |")
    deck = results["markitdown-deck.pptx"]["data"]["markdown"]
    assert "| 7 | 8 | 9 | 1b92870d-e3b5-4e65-8153-919f4ff45592 | 11 | 12 |" in deck


def test_firecrawls_sdk_scrapes_a_pdf_with_its_parser_options(
    firecrawl: Firecrawl, site: Site
) -> None:
    url = f"{site.url}/files/pdflatex-4-pages.pdf"
    parser = PDFParser(max_pages=3, pages=True, page_markers=True, mode="fast")
    doc = firecrawl.scrape(url, formats=["markdown"], parsers=[parser], max_age=0)
    assert doc.markdown is not None and "\n\n---\n\n<!-- page 3 -->\n\n" in doc.markdown
    assert "<!-- page 4 -->" not in doc.markdown
    assert doc.pages is not None and [p.page_number for p in doc.pages] == [1, 2, 3]
    assert all(p.markdown and p.markdown in doc.markdown for p in doc.pages)
    meta = doc.metadata_typed
    assert meta.num_pages == 4 and meta.content_type == "application/pdf"
    unread = firecrawl.scrape(url, formats=["markdown"], parsers=[], max_age=0)
    assert unread.markdown is not None and unread.markdown.startswith("JVBERi0")  # %PDF-


def test_firecrawls_sdk_reads_a_scan_by_ocr_and_not_in_fast_mode(
    firecrawl: Firecrawl, site: Site
) -> None:
    url = f"{site.url}/scans/scan.pdf"
    scan_files()  # made before the scrape: the site answers at once
    expected = "\n\n".join(page.text() for page in scan_pages(2))
    ocr = firecrawl.scrape(url, formats=["markdown"], parsers=[PDFParser(mode="ocr")], max_age=0)
    assert ocr.markdown is not None and word_f1(expected, ocr.markdown) >= 0.97, ocr.markdown
    assert ocr.markdown.startswith("# Chapter One\n\nThe harbour master kept a ledger")
    by_default = firecrawl.scrape(url, formats=["markdown"], max_age=0)
    assert by_default.markdown == ocr.markdown
    fast = firecrawl.scrape(url, formats=["markdown"], parsers=[PDFParser(mode="fast")], max_age=0)
    assert not fast.markdown  # the text layer only, and it has none: no OCR
    assert fast.metadata_typed.error is not None
    assert fast.metadata_typed.error.startswith("empty_content: the document has no text")
    [page] = scan_pages(1)
    image, _ = scan_files()["scan.png"]
    parsed = firecrawl.parse(image, filename="scan.png")
    assert parsed.markdown is not None and word_f1(page.text(), parsed.markdown) >= 0.97
    formats = {f.format: f for f in firecrawl.get_parse_formats()}
    assert formats["png"].available and ".tiff" in formats["tiff"].extensions


def test_firecrawls_sdk_parses_uploads_and_lists_what_it_reads(firecrawl: Firecrawl) -> None:
    paper = firecrawl.parse(FILES / "markitdown-paper.docx")
    assert paper.markdown is not None and "# Abstract" in paper.markdown
    assert paper.metadata_typed.source_url == "markitdown-paper.docx"
    sheets = firecrawl.parse((FILES / "markitdown-sheets.xlsx").read_bytes(), filename="q3.xlsx")
    assert sheets.markdown is not None
    assert "| 58 | 6ff4173b-42a5-4784-9b19-f49caff4d93d | 22 | 9 |" in sheets.markdown
    formats = {f.format: f for f in firecrawl.get_parse_formats()}
    assert formats["docx"].available and formats["pdf"].available
    assert ".xlsx" in formats["xlsx"].extensions and not formats["doc"].available
    with pytest.raises(BadRequestError, match="cannot be read"):
        firecrawl.parse(b"PK\x03\x04 not a workbook", filename="broken.xlsx")


async def test_a_native_upload_is_answered_and_kept_as_a_job(api) -> None:
    data = (FILES / "markitdown-book.epub").read_bytes()
    answer = await api.post(
        "/v1/parse", files={"file": ("book.epub", data, "application/epub+zip")}
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["status"] == "completed" and body["result"]["status"] == "succeeded"
    assert "# Chapter 1: Test Content" in body["result"]["data"]["markdown"]
    job = await api.get(f"/v1/jobs/{body['job_id']}")
    assert job.json()["labels"] == {"upload": "book.epub"}
    assert (await all_results(api, body["job_id"]))[0]["data"] == body["result"]["data"]


async def test_a_crawl_follows_the_links_a_pdf_holds(api, site) -> None:
    crawl = {"start_url": f"{site.url}/pdfsite/", "max_pages": 10, "max_depth": 3}
    job = await submit(api, {"crawl": crawl, "options": {"formats": ["markdown"]}})
    final = await wait_finished(api, job["id"])
    results = {r["url"].removeprefix(site.url): r for r in await all_results(api, job["id"])}
    assert set(results) == {
        "/pdfsite/",
        "/pdfsite/guide.pdf",
        "/pdfsite/from-link",  # the PDF's link annotation
        "/pdfsite/from-text",  # a URL its text spells out
    }, final
    assert all(r["status"] == "succeeded" for r in results.values()), results
    assert results["/pdfsite/guide.pdf"]["data"]["markdown"].startswith("A guide to the shop")


async def _checked(api, monitor_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    started = await api.post(f"/v1/monitors/{monitor_id}:run")
    assert started.status_code == 201, started.text
    deadline = time.monotonic() + 90
    while True:
        check = (await api.get(f"/v1/monitors/{monitor_id}/checks/{started.json()['id']}")).json()
        if check["status"] in ("completed", "partial", "failed"):
            break
        assert time.monotonic() < deadline, check
        await asyncio.sleep(0.3)
    pages = await api.get(f"/v1/monitors/{monitor_id}/checks/{check['id']}/pages")
    [page] = pages.json()["pages"]
    return check, page


async def test_a_monitor_finds_a_changed_pdf_and_diffs_its_text(api, site) -> None:
    key = f"{uuid.uuid4().hex[:8]}-prices.pdf"
    site.watched[key] = (200, simple_pdf(["Price list", "Tea costs 2.50 a box."]))
    body = {
        "urls": [f"{site.url}/watched/{key}"],
        "name": f"prices {key}",
        "schedule": {"text": "daily at 9:00"},
    }
    made = await api.post("/v1/monitors", json=body)
    assert made.status_code == 201, made.text
    monitor_id = made.json()["id"]
    first, page = await _checked(api, monitor_id)
    assert first["status"] == "completed" and page["status"] == "new", page
    _, page = await _checked(api, monitor_id)
    assert page["status"] == "same", page
    site.watched[key] = (200, simple_pdf(["Price list", "Tea costs 2.75 a box."]))
    _, page = await _checked(api, monitor_id)
    assert page["status"] == "changed", page
    assert "-Tea costs 2.50 a box." in page["diff"]["text"]
    assert "+Tea costs 2.75 a box." in page["diff"]["text"]
    assert (await api.delete(f"/v1/monitors/{monitor_id}")).status_code == 204


async def test_document_bombs_fail_alone_with_their_reason_and_the_next_job_completes(
    api, site
) -> None:
    names = ["bombs/flate.pdf", "bombs/pages.pdf", "files/google-doc-document.pdf"]
    options = {"formats": ["markdown"]}
    # made before the job, so the site answers at once: made at the first request, the bomb
    # took longer than the fetch's timeout on a loaded machine, and its fetch went again
    await asyncio.to_thread(lambda: (flate_bomb_pdf(), page_bomb_pdf(150_000)))
    job = await submit(api, {"urls": [f"{site.url}/{name}" for name in names], "options": options})
    await wait_finished(api, job["id"])
    results = {r["url"].removeprefix(site.url + "/"): r for r in await all_results(api, job["id"])}
    flate, pages = results["bombs/flate.pdf"], results["bombs/pages.pdf"]
    assert flate["status"] == "failed" and flate["error"].startswith("extraction_memory"), flate
    assert flate["attempts"] == 1  # permanent: never retried
    assert pages["status"] == "failed"
    assert pages["error"] == (
        "unsupported_content: the PDF has 150,000 pages, more than 100,000 (a page bomb?)"
    )
    assert results["files/google-doc-document.pdf"]["status"] == "succeeded"
    after = await submit(api, {"urls": [f"{site.url}/files/multicolumn.pdf"], "options": options})
    final = await wait_finished(api, after["id"])
    assert final["counts"]["succeeded"] == 1


async def test_a_scanned_pdf_job_with_default_options_gets_its_text_by_ocr(api, site) -> None:
    """Documents' options at their defaults (``ocr: auto``): the scan's pages have no text
    layer, so OCR reads them; before OCR, this page failed ``empty_content``."""
    options = {"formats": ["markdown", "text"]}

    async def usage() -> dict[str, Any]:
        first: dict[str, Any] = (await api.get("/v1/usage")).json()["usage"][0]
        return first

    before = await steady_async(usage)  # earlier jobs' statistics are in
    await asyncio.to_thread(scan_files)  # made before the job: the site answers at once
    job = await submit(api, {"urls": [f"{site.url}/scans/scan.pdf"], "options": options})
    final = await wait_finished(api, job["id"])
    [result] = await all_results(api, job["id"])
    assert final["counts"]["succeeded"] == 1, result
    expected = "\n\n".join(page.text() for page in scan_pages(2))
    assert word_f1(expected, result["data"]["markdown"]) >= 0.97, result["data"]
    assert word_f1(expected, result["data"]["text"]) >= 0.97
    after = await usage_after(api, before, "ocr_pages")
    assert after["ocr_pages"] - before["ocr_pages"] == 2  # metered: a weight of 1 each
    assert after["pages_today"] - before["pages_today"] == 1 + 2 + 2  # the page, PDF, OCR


async def test_image_bombs_and_broken_images_fail_alone_and_the_next_job_completes(
    api, site
) -> None:
    names = ["bomb.png", "corrupt.png", "scan.png"]
    options = {"formats": ["markdown"]}
    await asyncio.to_thread(scan_files)  # made before the job: the site answers at once
    urls = [f"{site.url}/scans/{name}" for name in names]
    job = await submit(api, {"urls": urls, "options": options})
    await wait_finished(api, job["id"])
    results = {r["url"].rsplit("/", 1)[1]: r for r in await all_results(api, job["id"])}
    bomb, corrupt = results["bomb.png"], results["corrupt.png"]
    assert bomb["status"] == "failed" and bomb["attempts"] == 1, bomb
    assert bomb["error"].startswith("unsupported_content: the image is ")
    assert "pixels, more than 40,000,000 (SCRAPEJOBS_OCR_MAX_PIXELS" in bomb["error"]
    assert corrupt["status"] == "failed" and corrupt["attempts"] == 1, corrupt
    assert corrupt["error"].startswith("unsupported_content: the PNG image file cannot be read")
    assert results["scan.png"]["status"] == "succeeded", results["scan.png"]
    assert "harbour master" in results["scan.png"]["data"]["markdown"]
    after = await submit(api, {"urls": [f"{site.url}/files/multicolumn.pdf"], "options": options})
    final = await wait_finished(api, after["id"])
    assert final["counts"]["succeeded"] == 1
