"""POST /v1/parse over the in-memory dispatcher with the real parsing processes: an upload read
into its result, kept as a finished job of the tenant's; its size checked before it is read;
what an upload cannot ask for refused; a file past its CPU budget failing alone."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from scrapejobs_devstack.demo_site.scan_writer import bomb_png
from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_dispatcher.uploads.parsing_processes import ParsingProcesses
from scrapejobs_dispatcher.uploads.upload import Upload
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.domain.jobspec import JobRequest, JobSpec
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from support.document_bombs import flate_bomb_pdf
from support.memory_dispatcher import memory_client
from support.scans import scan_pages, scanned_pdf, word_f1

FILES = Path(__file__).resolve().parents[2] / "data" / "documents"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def _file(
    name: str, content_type: str = "application/octet-stream"
) -> dict[str, tuple[str, bytes, str]]:
    return {"file": (name, (FILES / name).read_bytes(), content_type)}


async def test_an_uploaded_file_is_read_and_kept_as_a_finished_job() -> None:
    store, publisher = MemoryJobStore(), MemoryTaskPublisher()
    async with memory_client(store, publisher=publisher) as client:
        answer = await client.post("/v1/parse", files=_file("markitdown-paper.docx", DOCX))
        assert answer.status_code == 200, answer.text
        body = answer.json()
        job_id = body["job_id"]
        results = (await client.get(f"/v1/jobs/{job_id}/results")).json()["results"]
        job = (await client.get(f"/v1/jobs/{job_id}")).json()
    assert body["status"] == "completed"
    result = body["result"]
    assert result["status"] == "succeeded" and result["url"].endswith("/markitdown-paper.docx")
    assert "# Abstract" in result["data"]["markdown"]
    assert result["data"]["metadata"]["author"] == "Adam Fourney"
    assert results[0]["data"] == result["data"]  # kept with the tenant's results
    assert job["status"] == "completed" and job["labels"] == {"upload": "markitdown-paper.docx"}
    assert job["counts"]["succeeded"] == 1
    assert not publisher.published  # nothing for a worker to fetch


async def test_what_to_read_is_asked_as_a_job_asks_it_of_a_page() -> None:
    store = MemoryJobStore()
    request = {
        "options": {"formats": ["pages", "text"], "documents": {"max_pages": 2}},
        "labels": {"team": "finance"},
    }
    async with memory_client(store) as client:
        answer = await client.post(
            "/v1/parse",
            files=_file("pdflatex-4-pages.pdf"),
            data={"request": json.dumps(request)},
        )
    assert answer.status_code == 200, answer.text
    result = answer.json()["result"]
    assert [p["page_number"] for p in result["data"]["pages"]] == [1, 2]
    assert result["field_errors"]["document"] == "pages past 2 of 4 left unread (the limit)"
    [job] = store.jobs.values()
    assert job.labels == {"team": "finance", "upload": "pdflatex-4-pages.pdf"}
    assert job.status is JobStatus.COMPLETED


@pytest.mark.parametrize(
    ("request_body", "field"),
    [
        ({"options": {"headers": {"X-A": "b"}}}, "options.headers"),
        ({"options": {"render": "auto"}}, "options.render"),
        ({"options": {"formats": ["summary"]}}, "options.formats"),
        ({"options": {"formats": ["nope"]}}, "request.options.formats"),
        ({"pipeline": [{"ai": {"prompt": "x", "schema": {"type": "object"}}}]}, "pipeline"),
    ],
)
async def test_what_an_upload_cannot_ask_for_is_a_422_naming_it(
    request_body: dict[str, object], field: str
) -> None:
    store = MemoryJobStore()
    settings = DispatcherSettings(auth_mode="none", ai_provider="openai")
    async with memory_client(store, settings) as client:
        answer = await client.post(
            "/v1/parse",
            files=_file("markitdown-sample.rtf"),
            data={"request": json.dumps(request_body)},
        )
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["field"].startswith(field), answer.text
    assert not store.jobs


async def test_a_file_over_the_limit_is_refused_before_it_is_read() -> None:
    store = MemoryJobStore()
    settings = DispatcherSettings(auth_mode="none", max_upload_bytes=10_000)
    async with memory_client(store, settings) as client:
        big = await client.post("/v1/parse", files=_file("markitdown-paper.docx"))
        missing = await client.post("/v1/parse", data={"request": "{}"})
        not_json = await client.post(
            "/v1/parse", files={"file": ("a.rtf", b"{\\rtf1 hi}", "")}, data={"request": "{nope"}
        )
    assert big.status_code == 413, big.text
    assert (
        "larger than 10,000 bytes (SCRAPEJOBS_MAX_UPLOAD_BYTES)" in big.json()["error"]["message"]
    )
    assert missing.status_code == 422 and missing.json()["error"]["field"] == "file"
    assert not_json.status_code == 422 and not_json.json()["error"]["field"] == "request"
    assert not store.jobs


async def test_a_broken_or_unsupported_file_fails_its_job_saying_why() -> None:
    store = MemoryJobStore()
    async with memory_client(store) as client:
        broken = await client.post(
            "/v1/parse", files={"file": ("report.docx", b"PK\x03\x04 not really", DOCX)}
        )
        image = await client.post(
            "/v1/parse", files={"file": ("x.png", b"\x89PNG\r\n\x1a\n....", "image/png")}
        )
        sound = await client.post(
            "/v1/parse", files={"file": ("x.pdf", b"OggS\x00 not a PDF", "audio/ogg")}
        )
        retried = await client.post(f"/v1/jobs/{broken.json()['job_id']}:retry?status=failed")
    assert retried.status_code == 409, retried.text  # nothing can fetch an upload again
    assert "upload the file again" in retried.json()["error"]["message"]
    result = broken.json()["result"]
    assert result["status"] == "failed"
    assert result["error"].startswith("unsupported_content: the Word (DOCX) file cannot be read")
    assert image.json()["result"]["error"].startswith(
        "unsupported_content: the image cannot be read: cannot identify image file"
    )
    assert (
        sound.json()["result"]["error"] == "unsupported_content: unsupported content type audio/ogg"
    )


async def test_a_file_past_its_cpu_budget_fails_alone_and_the_next_one_is_read() -> None:
    # an HTML upload asked a cubic XPath over 1,500 elements: hours of CPU, ended at 1 s
    parsing = ParsingProcesses(1, budget_s=1, memory_mb=512)
    many = Upload("many.html", "text/html", b"<div><p>x</p></div>" * 1500)
    cubic = {"n": {"xpath": "count(//*[count(//*[count(//*) > 0]) > 0])"}}
    slow = JobSpec.from_request(JobRequest.model_validate({"url": many.url, "extract": cubic}))
    book = Upload("book.pdf", "application/pdf", (FILES / "multicolumn.pdf").read_bytes())
    read_it = JobSpec.from_request(
        JobRequest.model_validate({"url": book.url, "options": {"formats": ["markdown"]}})
    )
    try:
        spun = await parsing.outcome(many, slow)
        read = await parsing.outcome(book, read_it)
    finally:
        await parsing.close()
    assert spun.status is TaskStatus.FAILED
    assert spun.error == "extraction_timeout: reading the file took more than 1 s of CPU"
    assert read.status is TaskStatus.SUCCEEDED and read.data is not None
    assert str(read.data["markdown"]).startswith("# Two-Column Document")


async def test_firecrawls_parse_answers_a_document_naming_the_file() -> None:
    store = MemoryJobStore()
    options = {
        "formats": ["markdown"],
        "parsers": [{"type": "pdf", "pages": True, "pageMarkers": True, "maxPages": 3}],
        "origin": "python-sdk@4.55.0",
    }
    async with memory_client(store) as client:
        answer = await client.post(
            "/v2/parse",
            files=_file("pdflatex-4-pages.pdf", "application/pdf"),
            data={"options": json.dumps(options)},
        )
        formats = await client.get("/v2/parse/formats")
        refused = await client.post(
            "/v2/parse",
            files=_file("markitdown-sample.rtf"),
            data={"options": json.dumps({"waitFor": 1000})},
        )
        failed = await client.post(
            "/v2/parse", files={"file": ("x.docx", b"PK\x03\x04 broken", DOCX)}
        )
        acted = await client.post(
            "/v2/parse",
            files=_file("markitdown-sample.rtf"),
            data={"options": json.dumps({"actions": [{"type": "wait", "milliseconds": 10}]})},
        )
        fetch_only = {"maxAge": 0, "storeInCache": False, "skipTlsVerification": False}
        ignored = await client.post(
            "/v2/parse",
            files=_file("markitdown-sample.rtf"),
            data={"options": json.dumps(fetch_only)},
        )
    assert (
        acted.status_code == 400
        and "an upload is not rendered: leave actions out" in (acted.json()["error"])
    )
    assert ignored.status_code == 200, ignored.text  # a fetch's options: accepted, nothing done
    assert answer.status_code == 200, answer.text
    data = answer.json()["data"]
    assert "<!-- page 2 -->" in data["markdown"] and "<!-- page 4 -->" not in data["markdown"]
    assert [p["pageNumber"] for p in data["pages"]] == [1, 2, 3]
    metadata = data["metadata"]
    assert metadata["numPages"] == 4 and metadata["sourceFile"] == "pdflatex-4-pages.pdf"
    assert metadata["sourceURL"] == "pdflatex-4-pages.pdf"
    listed = {f["format"]: f for f in formats.json()["data"]["formats"]}
    assert listed["docx"]["available"] is True and listed["doc"]["available"] is False
    assert ".xlsx" in listed["xlsx"]["extensions"] and listed["html"]["mimeTypes"] == ["text/html"]
    assert listed["png"] == {
        "format": "png",
        "kind": "image",
        "extensions": [".png"],
        "mimeTypes": ["image/png"],
        "available": True,  # read by OCR: this machine has its English pack
    }
    assert "eng" in formats.json()["data"]["ocrLanguages"]
    assert refused.status_code == 400 and refused.json()["success"] is False
    assert "not rendered" in refused.json()["error"]
    assert failed.status_code == 400 and failed.json()["code"] == "PARSE_FAILED"
    assert "the Word (DOCX) file cannot be read" in failed.json()["error"]


async def test_a_decompression_bomb_upload_fails_alone_and_the_next_upload_is_read() -> None:
    store = MemoryJobStore()
    settings = DispatcherSettings(auth_mode="none", parse_memory_mb=256)
    async with memory_client(store, settings) as client:
        bomb = await client.post(
            "/v1/parse", files={"file": ("bomb.pdf", flate_bomb_pdf(), "application/pdf")}
        )
        after = await client.post("/v1/parse", files=_file("google-doc-document.pdf"))
    result = bomb.json()["result"]
    assert result["status"] == "failed"
    assert result["error"] == "extraction_memory: reading the file needed more than 256 MiB"
    assert after.json()["result"]["data"]["markdown"].startswith("# Example document")


async def test_a_documents_job_page_shows_its_kind_and_its_pages() -> None:
    store = MemoryJobStore()
    request = {
        "options": {"formats": ["markdown", "metadata", "pages"], "documents": {"max_pages": 2}}
    }
    async with memory_client(store) as client:
        answer = await client.post(
            "/v1/parse",
            files=_file("pdflatex-4-pages.pdf", "application/pdf"),
            data={"request": json.dumps(request)},
        )
        page = (await client.get(f"/ui/jobs/{answer.json()['job_id']}")).text
    assert "application/pdf · 4 pages, 2 read" in page
    assert 'data-testid="document-pages"' in page and "2 pages</summary>" in page
    assert '<li value="2">' in page


async def test_an_upload_past_the_tenants_daily_quota_is_refused_before_it_is_read() -> None:
    store = MemoryJobStore()
    settings = DispatcherSettings(auth_mode="none", tenant_pages_per_day=1)
    async with memory_client(store, settings) as client:
        first = await client.post("/v1/parse", files=_file("markitdown-sample.rtf"))
        second = await client.post("/v1/parse", files=_file("markitdown-sample.rtf"))
    assert first.status_code == 200, first.text
    assert second.status_code == 429, second.text
    assert len(store.jobs) == 1  # the second was never read, nor kept


async def test_uploads_past_what_an_instance_holds_are_refused_before_their_body_is_read() -> None:
    """An upload holds its place from before its body is read: while one is received (its
    body still arriving), the next is a 503 with Retry-After, its body never read."""
    settings = DispatcherSettings(
        auth_mode="none", dashboard_cache_s=0, files_bucket="", parse_queue=1
    )
    arrived = asyncio.Event()
    finish = asyncio.Event()
    sent: list[str] = []
    boundary = "b0undary"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.html"\r\n'
        "Content-Type: text/html\r\n\r\n<html><body><h1>Slow</h1>"
    ).encode()
    tail = f"</body></html>\r\n--{boundary}--\r\n".encode()
    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}

    async def slow_body() -> AsyncIterator[bytes]:
        sent.append("slow")
        yield head
        arrived.set()
        await finish.wait()
        yield tail

    async def second_body() -> AsyncIterator[bytes]:
        sent.append("second")
        yield head + tail

    async with memory_client(MemoryJobStore(), settings) as client:
        slow = asyncio.create_task(client.post("/v1/parse", content=slow_body(), headers=headers))
        await arrived.wait()
        refused = await client.post("/v1/parse", content=second_body(), headers=headers)
        finish.set()
        done = await slow
    assert refused.status_code == 503 and refused.headers["Retry-After"] == "5"
    assert refused.json()["error"]["code"] == "uploads_busy"
    assert sent == ["slow"]  # the refused upload's body was never read
    assert done.status_code == 200 and "# Slow" in done.json()["result"]["data"]["markdown"]


async def test_a_scanned_image_upload_is_read_by_ocr_within_its_budgets() -> None:
    """Each page read by OCR has its own CPU budget: a 3-page scan (about 2 s of CPU) is read
    by a process whose read has 1 s, and a decompression bomb's header fails alone."""
    store = MemoryJobStore()
    settings = DispatcherSettings(auth_mode="none", parse_budget_s=1, ocr_page_budget_s=5)
    scan = scanned_pdf(3)
    request = {"options": {"formats": ["markdown", "metadata"]}}
    async with memory_client(store, settings) as client:
        read = await client.post(
            "/v1/parse",
            files={"file": ("scan.pdf", scan, "application/pdf")},
            data={"request": json.dumps(request)},
        )
        bomb = await client.post(
            "/v1/parse", files={"file": ("bomb.png", bomb_png(), "application/octet-stream")}
        )
        fast = await client.post(
            "/v1/parse",
            files={"file": ("scan.pdf", scan, "application/pdf")},
            data={"request": json.dumps({"options": {"documents": {"ocr": "fast"}}})},
        )
        shown = (await client.get(f"/ui/jobs/{read.json()['job_id']}")).text
    result = read.json()["result"]
    assert result["status"] == "succeeded", result
    assert "application/pdf · 3 pages, 3 by OCR" in shown
    expected = "\n\n".join(page.text() for page in scan_pages(3))
    assert word_f1(expected, result["data"]["markdown"]) >= 0.97
    assert bomb.json()["result"]["error"].startswith("unsupported_content: the image is ")
    assert fast.json()["result"]["error"].startswith("empty_content: the document has no text")
