"""Workload D: documents beside web pages (issue 55).

A file server (``python -m http.server``, a process of its own) serves ``D_DOCUMENTS`` PDFs of
``D_DOCUMENT_PAGES`` pages of text each (scrapejobs_devstack/demo_site/pdf_writer.py). A plain
job of ``D_PLAIN_PAGES`` catalog pages of another host is run ``D_RUNS`` times alone, then
``D_RUNS`` times beside a job of the PDFs submitted with it (a new job each time, every
setting at its default; only runs that ended with PDFs still being read count), then
``D_RUNS`` times alone again, after one unmeasured run: the ratio of the median run beside the
PDFs to the median run alone. A run on this machine varies by a fifth or more, so medians,
over as many runs beside as alone.

The control (a labelled row): the same plain runs beside ``D_CONTROL_LOOPS`` busy loops that
take the CPU only when nothing else wants it (``SCHED_IDLE``, the policy documents are read
at): what any CPU used beside the pages costs them on this machine, whatever its priority.

Then the CPU one process takes to read a ``D_BOOK_PAGES``-page text PDF into markdown, in this
process.

Goals: the plain ratio ≥ ``D_GOAL_RATIO`` (documents never starve pages); the book read in
≤ ``D_GOAL_BOOK_S`` s of CPU.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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
D_RUNS = 3  # plain runs alone before, beside the PDFs, alone after
D_CONTROL_LOOPS = 2  # busy loops at the idle priority in the control: one a core
D_GOAL_RATIO = 0.9
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

    def documents_open(job_id: str) -> int:
        counts = api.get(f"/v1/jobs/{job_id}").json()["counts"]
        return sum(counts.get(s, 0) for s in ("queued", "running"))

    before = plain.measured(D_RUNS)
    beside: list[float] = []  # plain runs that ended with PDFs still being read
    overlapped = []
    documents_s: list[float] = []
    for _ in range(D_RUNS):
        started = time.perf_counter()
        documents, _ = submit_job(api, document_urls, options={"formats": ["markdown"]})
        figure = plain.one()
        overlapped.append(documents_open(documents["id"]) > 0)
        if overlapped[-1]:
            beside.append(figure)
        done = wait_completed(api, documents["id"], timeout_s=timeout_s)
        assert done["counts"]["succeeded"] == len(document_urls), done["counts"]
        documents_s.append(time.perf_counter() - started)
    after = plain.measured(D_RUNS)
    with idle_loops(D_CONTROL_LOOPS):
        control = [plain.one() for _ in range(D_RUNS)]
    alone = statistics.median(before + after)
    ratio = round(statistics.median(beside) / alone, 3) if beside else None
    document_pages = len(document_urls) * D_DOCUMENT_PAGES
    figures: dict[str, Any] = {
        "plain_pages_per_s_alone": round(alone, 1),
        "plain_pages_per_s_beside_documents": round(statistics.median(beside), 1)
        if beside
        else None,
        "plain_ratio": ratio,
        "plain_runs": {"alone_before": before, "beside_documents": beside, "alone_after": after},
        "overlapped": overlapped,
        "control_idle_loops": {
            "loops": D_CONTROL_LOOPS,
            "runs": control,
            "plain_ratio": round(statistics.median(control) / alone, 3),
        },
        "documents": len(document_urls),
        "document_pages": document_pages,
        "document_pages_per_s": round(document_pages / statistics.median(documents_s), 1),
        "book": book_read(),
        "goals": {"plain_ratio": D_GOAL_RATIO, "book_cpu_s": D_GOAL_BOOK_S},
    }
    print(f"scrapejobs D: {figures}", flush=True)
    return figures


_IDLE_LOOP = (
    "import os\n"
    "os.nice(19)\n"
    "os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))\n"
    "while True:\n"
    "    pass\n"
)


@contextmanager
def idle_loops(count: int) -> Iterator[None]:
    """``count`` busy loops at the idle priority while the block runs; ended by their pid."""
    loops = [subprocess.Popen([sys.executable, "-c", _IDLE_LOOP]) for _ in range(count)]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait(timeout=10)


def book_read() -> dict[str, Any]:
    """The CPU one process takes to read a ``D_BOOK_PAGES``-page text PDF into markdown."""
    from scrapejobs_shared.extraction import extract_page

    book = text_pdf(document_pages(0, D_BOOK_PAGES))
    extract_page(book, content_type="application/pdf", url="http://b/", formats=["markdown"])
    started = time.process_time()
    read = extract_page(book, content_type="application/pdf", url="http://b/", formats=["markdown"])
    cpu_s = time.process_time() - started
    return {"pages": read.document_pages, "bytes": len(book), "cpu_s": round(cpu_s, 3)}
