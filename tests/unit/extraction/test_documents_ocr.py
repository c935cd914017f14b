"""Scans and images read by OCR (extraction/documents/ocr.py, images.py, pdf.py), on scans
made from known text (tests/support/scans.py): real Tesseract, real rasterising, real Pillow."""

from __future__ import annotations

import io
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from scrapejobs_devstack.demo_site.scan_writer import (
    ScanPage,
    bomb_png,
    image_bytes,
    scanned,
    text_pdf,
)
from scrapejobs_shared.domain.jobspec import JobRequest, JobSpec
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.extraction.documents import (
    DocumentOptions,
    DocumentUnreadable,
    read_document,
)
from scrapejobs_shared.extraction.documents.ocr import (
    OcrLimits,
    OcrRequest,
    installed_languages,
    tesseract_name,
)
from scrapejobs_shared.outcomes.page_outcome import extract_outcome
from scrapejobs_shared.ports.fetcher import FetchResponse
from support.scans import PROSE, scan_pages, scanned_pdf, word_f1

PDF = "application/pdf"
FILES = Path(__file__).resolve().parents[2] / "data" / "documents"


def _options(mode: str = "auto", **limits: int) -> DocumentOptions:
    return DocumentOptions(ocr=OcrRequest(mode, limits=OcrLimits(**limits)))  # type: ignore[arg-type]


def test_a_scanned_pdf_is_read_by_ocr_by_default_and_not_in_fast_mode() -> None:
    pages = scan_pages(2)
    scan = scanned_pdf(2)
    document = read_document(PDF, scan, DocumentOptions())
    expected = "\n\n".join(page.text() for page in pages)
    assert document.ocr_pages == 2 and word_f1(expected, document.markdown) >= 0.97
    assert document.markdown.startswith("# Chapter One\n\nThe harbour master kept a ledger")
    # each paragraph whole, in order, and the running header and page numbers left out
    assert document.pages[0].markdown.count("\n\n") == 3, document.pages[0].markdown
    assert "Harbour Records" not in document.markdown
    assert not any(line.strip() in ("1", "2") for line in document.markdown.splitlines())
    fast = read_document(PDF, scan, _options("fast"))
    assert fast.ocr_pages == 0 and fast.text == ""


def test_ocr_mode_reads_every_page_even_one_with_a_text_layer() -> None:
    pdf = text_pdf(scan_pages(1))
    layer = read_document(PDF, pdf, DocumentOptions())
    assert layer.ocr_pages == 0 and "harbour master" in layer.text
    ocr = read_document(PDF, pdf, _options("ocr"))
    assert ocr.ocr_pages == 1 and word_f1(layer.text, ocr.text) >= 0.97


def test_two_columns_are_read_column_by_column() -> None:
    page = ScanPage(PROSE, heading="Annual summary", columns=2)
    document = read_document(PDF, scanned_pdf_of([page]), DocumentOptions())
    markdown = document.markdown
    starts = [markdown.find(paragraph[:30]) for paragraph in PROSE]
    assert -1 not in starts and starts == sorted(starts), markdown
    assert word_f1(page.text(), markdown) >= 0.97


def scanned_pdf_of(pages: list[ScanPage]) -> bytes:
    from scrapejobs_devstack.demo_site.scan_writer import made_scan

    return made_scan(pages)


@pytest.mark.parametrize("format", ["PNG", "JPEG", "WEBP", "GIF"])
def test_an_image_is_read_by_ocr(format: str) -> None:
    [page] = scan_pages(1)
    [image] = scanned(text_pdf([page]))
    data = image_bytes(image.convert("RGB") if format == "JPEG" else image, format)
    media = {"PNG": "png", "JPEG": "jpeg", "WEBP": "webp", "GIF": "gif"}[format]
    document = read_document(f"image/{media}", data, DocumentOptions())
    assert document.ocr_pages == 1 and word_f1(page.text(), document.text) >= 0.95
    assert document.metadata["width"] == image.width
    fast = read_document(f"image/{media}", data, _options("fast"))
    assert fast.ocr_pages == 0 and fast.text == ""


def test_a_tiffs_pages_are_the_documents_pages_within_the_page_limit() -> None:
    pages = scan_pages(3)
    images = scanned(text_pdf(pages))
    out = io.BytesIO()
    images[0].save(out, format="TIFF", save_all=True, append_images=images[1:])
    document = read_document("image/tiff", out.getvalue(), DocumentOptions(max_pages=2))
    assert document.page_count == 3 and len(document.pages) == 2 and document.truncated
    assert "Chapter Two" in document.pages[1].markdown


def test_ocr_stops_at_its_page_limit_and_says_so() -> None:
    document = read_document(PDF, scanned_pdf(3), _options(max_pages=1))
    assert document.ocr_pages == 1 and len(document.pages) == 3
    assert document.pages[0].text and not document.pages[2].text
    assert document.notes == (
        "2 pages without text left unread: OCR reads 1 pages of a document at most "
        "(SCRAPEJOBS_OCR_MAX_PAGES)",
    )


def test_a_huge_page_is_rasterised_below_the_pixel_limit() -> None:
    # a page 200 inches square: 1.6 billion pixels at 200 dpi, rasterised at 2 million
    huge = text_pdf([ScanPage(["nothing here"])]).replace(b"612 792", b"14400 14400")
    document = read_document(PDF, huge, _options("ocr", max_pixels=2_000_000))
    assert document.ocr_pages == 1


def test_an_image_whose_header_claims_too_many_pixels_fails_before_it_is_decoded() -> None:
    bomb = bomb_png(60_000, 60_000)
    assert len(bomb) < 200_000
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(DocumentUnreadable) as caught:
        read_document("image/png", bomb, DocumentOptions())
    assert "3,600,000,000 pixels, more than 40,000,000" in caught.value.reason
    with pytest.raises(DocumentUnreadable, match="the image is 8,000 by 6,000 pixels"):
        read_document("image/png", bomb_png(8_000, 6_000), DocumentOptions())
    assert "SCRAPEJOBS_OCR_MAX_PIXELS" in caught.value.reason
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 100  # 3.6 billion pixels were never allocated


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR broken", "PNG image file cannot be read"),
        (b"\x00\x01 not an image at all", "the image cannot be read: cannot identify"),
    ],
)
def test_a_corrupt_image_fails_with_its_reason(data: bytes, reason: str) -> None:
    with pytest.raises(DocumentUnreadable, match=reason):
        read_document("image/png", data, DocumentOptions())


def test_a_truncated_image_fails_with_its_reason() -> None:
    [image] = scanned(text_pdf(scan_pages(1)))
    data = image_bytes(image)
    with pytest.raises(DocumentUnreadable, match=r"truncated|cannot be read"):
        read_document("image/png", data[: len(data) // 2], DocumentOptions())


def test_languages_asked_for_must_be_installed_and_location_languages_fall_back() -> None:
    assert "eng" in installed_languages()
    assert tesseract_name("de-DE") == "deu" and tesseract_name("zh-Hant-TW") == "chi_tra"
    assert tesseract_name("xx") is None
    missing = "zzz" if "zzz" not in installed_languages() else "qqq"
    image = image_bytes(scanned(text_pdf(scan_pages(1)))[0])
    with pytest.raises(DocumentUnreadable, match=f"OCR in {missing} is not installed here"):
        read_document("image/png", image, DocumentOptions(ocr=OcrRequest(languages=(missing,))))
    asked = OcrRequest(asked_in=("xx-YY", "en-GB"))
    assert asked.languages_read() == ("eng",)
    assert OcrRequest(asked_in=("xx",)).languages_read() == ("eng",)


def test_a_job_of_a_scan_gets_its_text_and_meters_its_ocr_pages_by_weight() -> None:
    spec = JobSpec.from_request(
        JobRequest.model_validate(
            {"url": "http://a.example/scan.pdf", "options": {"formats": ["markdown"]}}
        )
    )
    response = FetchResponse(
        "http://a.example/scan.pdf", 200, {"content-type": PDF}, scanned_pdf(2), 5
    )
    outcome = extract_outcome(response, spec, OcrLimits(page_weight=3)).outcome
    assert outcome.status is TaskStatus.SUCCEEDED, outcome.error
    assert "harbour master" in str(outcome.data["markdown"])
    assert outcome.metered.ocr_pages == 2 and outcome.metered.ocr_credits == 6
    assert outcome.metered.page_credits == 2 + 6  # a PDF page read, and its OCR's weight
    limited = extract_outcome(response, spec, OcrLimits(max_pages=1)).outcome
    assert limited.field_errors is not None
    assert "left unread: OCR reads 1 pages" in limited.field_errors["document"]


def test_a_pages_cpu_budget_is_its_own_in_a_limited_process() -> None:
    """In a process whose CPU is limited (a budgeted child), each page read by OCR extends the
    limit by its own budget; a process without a limit is never given one."""
    script = (
        "import resource, time\n"
        "from scrapejobs_shared.processes.limits import extend_cpu\n"
        "extend_cpu(5)\n"
        "assert resource.getrlimit(resource.RLIMIT_CPU)[0] == resource.RLIM_INFINITY\n"
        "resource.setrlimit(resource.RLIMIT_CPU, (1, resource.RLIM_INFINITY))\n"
        "extend_cpu(5)\n"
        "soft = resource.getrlimit(resource.RLIMIT_CPU)[0]\n"
        "assert 5 <= soft <= 7, soft\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stdout.strip() == "ok", done.stderr


def test_an_image_with_transparency_is_read_on_white() -> None:
    [image] = scanned(text_pdf(scan_pages(1)))
    rgba = Image.new("RGBA", image.size, (0, 0, 0, 0))
    rgba.putalpha(Image.eval(image, lambda v: 255 - v))  # black text on transparency
    document = read_document("image/png", image_bytes(rgba), DocumentOptions())
    assert "harbour master" in document.text
