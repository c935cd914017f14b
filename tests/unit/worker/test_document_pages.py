"""A job's PDF page: read into markdown like a web page's; a password-protected one a permanent
failure of that page alone, with its reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scrapejobs_shared.domain.jobspec import JobRequest, JobSpec
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.outcomes.page_outcome import extract_outcome
from scrapejobs_shared.ports.fetcher import FetchResponse

FILES = Path(__file__).resolve().parents[2] / "data" / "documents"


def spec(**body: Any) -> JobSpec:
    return JobSpec.from_request(JobRequest.model_validate({"url": "http://a.example/", **body}))


def response(name: str) -> FetchResponse:
    headers = {"content-type": "application/pdf"}
    body = (FILES / name).read_bytes()
    return FetchResponse("http://a.example/report.pdf", 200, headers, body, 5)


def test_a_pdf_page_succeeds_with_its_markdown() -> None:
    job = spec(options={"formats": ["markdown", "metadata"]})
    outcome = extract_outcome(response("google-doc-document.pdf"), job).outcome
    assert outcome.status is TaskStatus.SUCCEEDED, outcome.error
    assert outcome.data is not None
    assert str(outcome.data["markdown"]).startswith("# Example document")
    metadata = outcome.data["metadata"]
    assert isinstance(metadata, dict) and metadata["title"] == "PDF Example Document"
    assert outcome.metered.document_pages == 1  # a credit a PDF page read (usage)


def test_the_pdf_pages_read_are_counted_as_read_under_the_limit() -> None:
    job = spec(options={"formats": ["markdown"], "documents": {"max_pages": 3}})
    outcome = extract_outcome(response("pdflatex-4-pages.pdf"), job).outcome
    assert outcome.metered.document_pages == 3


def test_a_password_protected_pdf_fails_with_its_reason() -> None:
    outcome = extract_outcome(response("libreoffice-writer-password.pdf"), spec()).outcome
    assert outcome.status is TaskStatus.FAILED
    assert outcome.error == "unsupported_content: the PDF is password-protected"


def test_a_pdf_cut_at_the_fetch_size_limit_fails_saying_so() -> None:
    whole = (FILES / "multicolumn.pdf").read_bytes()
    headers = {"content-type": "application/pdf"}
    cut = FetchResponse("http://a.example/big.pdf", 200, headers, whole[:20000], 5, truncated=True)
    outcome = extract_outcome(cut, spec()).outcome
    assert outcome.status is TaskStatus.FAILED and outcome.error is not None
    assert outcome.error.startswith("unsupported_content: the PDF cannot be read")
    assert outcome.error.endswith("(the response was cut at the fetch size limit)")
