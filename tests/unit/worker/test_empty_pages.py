"""A page that shows nothing (an app shell, a blank body) is no success unless one of the job's
fields found something on it (a shell's meta tags may be all a job wants)."""

from __future__ import annotations

from typing import Any

from scrapejobs_shared.domain.jobspec import JobRequest, JobSpec
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.outcomes.page_outcome import extract_outcome
from scrapejobs_shared.ports.fetcher import FetchResponse

SHELL = (
    b"<html><head><title>App</title><meta property='og:title' content='Our app'>"
    b"<script src='/app.js'></script></head><body><div id='root'>Loading...</div></body></html>"
)


def spec(**body: Any) -> JobSpec:
    return JobSpec.from_request(JobRequest.model_validate({"url": "http://a.example/", **body}))


def response(body: bytes, content_type: str = "text/html", rendered_ms: int | None = None):
    headers = {"content-type": content_type}
    return FetchResponse("http://a.example/", 200, headers, body, 5, rendered_ms=rendered_ms)


def test_a_shell_asked_for_its_markdown_fails_empty_content_and_says_what_would_help() -> None:
    outcome = extract_outcome(response(SHELL), spec(options={"formats": ["markdown"]})).outcome
    assert outcome.status is TaskStatus.FAILED and outcome.http_status == 200
    assert outcome.error is not None and outcome.error.startswith("empty_content: ")
    assert "options.render" in outcome.error and outcome.elapsed_ms == 5


def test_even_rendered_it_says_so() -> None:
    outcome = extract_outcome(response(SHELL, rendered_ms=300), spec()).outcome
    assert outcome.error == "empty_content: the page shows nothing, even rendered in a browser"


def test_a_field_that_found_something_makes_it_a_success() -> None:
    fields = {"name": {"css": "meta[property='og:title']::attr(content)"}}
    outcome = extract_outcome(response(SHELL), spec(extract=fields)).outcome
    assert outcome.status is TaskStatus.SUCCEEDED and outcome.data == {"name": "Our app"}


def test_fields_at_their_defaults_found_nothing() -> None:
    fields = {
        "title": {"css": "h1::text", "default": "n/a"},
        "tags": {"css": "li::text", "all": True},
    }
    outcome = extract_outcome(response(SHELL), spec(extract=fields)).outcome
    assert outcome.status is TaskStatus.FAILED and outcome.error is not None
    assert outcome.error.startswith("empty_content: ")


def test_a_blank_text_body_is_empty_and_json_never_is() -> None:
    blank = extract_outcome(response(b"  \n", "text/plain"), spec()).outcome
    assert blank.error == "empty_content: the response's body is blank"
    empty_json = extract_outcome(response(b"{}", "application/json"), spec()).outcome
    assert empty_json.status is TaskStatus.SUCCEEDED


# A PDF of one blank page (PDFium repairs the missing cross-reference table, as readers do).
BLANK_PDF = (
    b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
    b"2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n"
    b"3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >> endobj\n"
    b"trailer << /Root 1 0 R >>\n%%EOF\n"
)


def test_a_pdf_without_text_is_empty_and_says_whether_ocr_looked() -> None:
    outcome = extract_outcome(response(BLANK_PDF, "application/pdf"), spec()).outcome
    assert outcome.status is TaskStatus.FAILED
    said = "empty_content: the document has no text, and OCR found none on its pages"
    assert outcome.error == said
    fast = spec(options={"documents": {"ocr": "fast"}})
    outcome = extract_outcome(response(BLANK_PDF, "application/pdf"), fast).outcome
    assert outcome.error is not None and "a scan, read without OCR?" in outcome.error
