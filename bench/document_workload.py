"""Workload D: documents beside web pages (issue 55).

A file server (``python -m http.server``, a process of its own) serves ``D_DOCUMENTS`` PDFs of
``D_DOCUMENT_PAGES`` pages of text each (scrapejobs_devstack/demo_site/pdf_writer.py). The
plain throughput of ``D_PLAIN_PAGES`` catalog pages of another host is measured alone, then
while a job of the PDFs runs (every setting at its default: the PDFs read in the same
extraction processes as the pages), then alone again, each set after one unmeasured run (as
M measures model work beside plain pages): the ratio of the best run beside the documents to
the mean of the best runs alone (only runs that ended while PDFs were still being read count as
beside them), the PDFs' pages/s, and how many PDFs were still open when the last of those runs
ended. Then the CPU one process takes to read a ``D_BOOK_PAGES``-page
text PDF into markdown, in this process.

Goals: the plain ratio ≥ ``D_GOAL_RATIO`` (documents never starve pages); the book read in
≤ ``D_GOAL_BOOK_S`` s of CPU.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from scrapejobs_devstack.demo_site.pdf_writer import text_pdf
from scrapejobs_devstack.processes import free_port, start_process, wait_http

D_DOCUMENTS = 200
D_DOCUMENT_PAGES = 10
D_PLAIN_PAGES = 2000
D_PLAIN_HOST = "127.0.0.4"
D_BOOK_PAGES = 100
D_BESIDE_RUNS = 3  # plain runs while the PDFs are read, at most
D_GOAL_RATIO = 0.9  # the noise of a plain run on this machine is about a tenth
D_GOAL_BOOK_S = 2.0
_LINE = "Line {line} of page {page} of report {doc}: revenue, costs and the outlook for the year."


def document_pages(doc: int, pages: int) -> list[list[str]]:
    """The text of report ``doc``: a heading and 45 lines on each page."""
    return [
        [f"Report {doc}, section {page}"]
        + [_LINE.format(line=line, page=page, doc=doc) for line in range(45)]
        for page in range(pages)
    ]


def serve_documents(
    log_dir: Path, register: Callable[[str, Callable[[], None]], None]
) -> list[str]:
    """The PDFs written to a directory served by a file server of their own: their URLs."""
    folder = Path(tempfile.mkdtemp(prefix="scrapejobs-documents-"))
    for doc in range(D_DOCUMENTS):
        (folder / f"report-{doc}.pdf").write_bytes(text_pdf(document_pages(doc, D_DOCUMENT_PAGES)))
    port = free_port()
    argv = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"]
    argv += ["--directory", str(folder)]
    process = start_process("document-server", argv, {}, log_dir)
    register("document server", process.stop)
    url = f"http://127.0.0.1:{port}"
    wait_http(f"{url}/report-0.pdf", process, timeout_s=30)
    return [f"{url}/report-{doc}.pdf" for doc in range(D_DOCUMENTS)]


def run_document_workload(
    api: httpx.Client, document_urls: list[str], plain_urls: list[str], timeout_s: float
) -> dict[str, Any]:
    """D, as the module says."""
    from bench.stack_run import PlainRuns, submit_job, wait_completed

    plain = PlainRuns(api, plain_urls, timeout_s)
    measured = plain.measured

    def documents_open(job_id: str) -> int:
        counts = api.get(f"/v1/jobs/{job_id}").json()["counts"]
        return sum(counts.get(s, 0) for s in ("queued", "running"))

    before = measured(2)
    started = time.perf_counter()
    documents, _ = submit_job(api, document_urls, options={"formats": ["markdown"]})
    beside: list[float] = []  # plain runs that ended with PDFs still being read
    still_open = 0
    for _ in range(D_BESIDE_RUNS):
        figure = plain.one()
        still_open = documents_open(documents["id"])
        if not still_open:
            beside = beside or [figure]  # the PDFs ended first: the first run, flagged below
            break
        beside.append(figure)
    done = wait_completed(api, documents["id"], timeout_s=timeout_s)
    documents_wall = time.perf_counter() - started
    after = measured(2)
    alone = round((max(before) + max(after)) / 2, 1)
    figures: dict[str, Any] = {
        "plain_pages_per_s_alone": alone,
        "plain_pages_per_s_beside_documents": max(beside),
        "plain_ratio": round(max(beside) / alone, 3),
        "plain_runs": {"alone_before": before, "beside_documents": beside, "alone_after": after},
        "documents": len(document_urls),
        "document_pages": len(document_urls) * D_DOCUMENT_PAGES,
        "document_pages_per_s": round(len(document_urls) * D_DOCUMENT_PAGES / documents_wall, 1),
        "documents_open_after_plain": still_open,
        "documents_counts": done.get("counts"),
        "book": book_read(),
        "goals": {"plain_ratio": D_GOAL_RATIO, "book_cpu_s": D_GOAL_BOOK_S},
    }
    print(f"scrapejobs D: {figures}", flush=True)
    return figures


def book_read() -> dict[str, Any]:
    """The CPU one process takes to read a ``D_BOOK_PAGES``-page text PDF into markdown."""
    from scrapejobs_shared.extraction import extract_page

    book = text_pdf(document_pages(0, D_BOOK_PAGES))
    extract_page(book, content_type="application/pdf", url="http://b/", formats=["markdown"])
    started = time.process_time()
    read = extract_page(book, content_type="application/pdf", url="http://b/", formats=["markdown"])
    cpu_s = time.process_time() - started
    return {"pages": read.document_pages, "bytes": len(book), "cpu_s": round(cpu_s, 3)}
