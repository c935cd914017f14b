"""Workload D: documents beside web pages (issue 55).

A file server (``python -m http.server``, a process of its own) serves ``D_DOCUMENTS`` PDFs of
``D_DOCUMENT_PAGES`` pages of text each (scrapejobs_devstack/demo_site/pdf_writer.py). A plain
job of ``D_PLAIN_PAGES`` catalog pages of another host is run ``D_RUNS`` times alone, then
``D_RUNS`` times while jobs of the PDFs run one after another (every setting at its default:
PDFs are read all through each run, however long it takes), then ``D_RUNS`` times alone again,
after one unmeasured run: the ratio of the median run beside the PDFs to the median run alone.
A run on this machine varies by a fifth or more, so medians, over as many runs beside as
alone.

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
import threading
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
    files = {
        f"report-{doc}.pdf": text_pdf(document_pages(doc, D_DOCUMENT_PAGES))
        for doc in range(D_DOCUMENTS)
    }
    url = serve_files(files, "document-server", log_dir, register)
    return [f"{url}/report-{doc}.pdf" for doc in range(D_DOCUMENTS)]


def serve_files(
    files: dict[str, bytes],
    name: str,
    log_dir: Path,
    register: Callable[[str, Callable[[], None]], None],
) -> str:
    """``files`` (name → bytes) written to a directory served by a file server of their own
    (``python -m http.server``, a process stopped by its pid): its URL."""
    folder = Path(tempfile.mkdtemp(prefix=f"scrapejobs-{name}-"))
    for file_name, data in files.items():
        (folder / file_name).write_bytes(data)
    port = free_port()
    argv = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"]
    argv += ["--directory", str(folder)]
    process = start_process(name, argv, {}, log_dir)
    register(name, process.stop)
    url = f"http://127.0.0.1:{port}"
    wait_http(f"{url}/{next(iter(files))}", process, timeout_s=30)
    return url


def run_document_workload(
    api: httpx.Client, document_urls: list[str], plain_urls: list[str], timeout_s: float
) -> dict[str, Any]:
    """D, as the module says."""
    from bench.stack_run import PlainRuns

    plain = PlainRuns(api, plain_urls, timeout_s)
    before = plain.measured(D_RUNS)
    with DocumentJobs(api, document_urls, timeout_s) as documents:
        beside = [plain.one() for _ in range(D_RUNS)]
    after = plain.measured(D_RUNS)
    with idle_loops(D_CONTROL_LOOPS):
        control = [plain.one() for _ in range(D_RUNS)]
    alone = statistics.median(before + after)
    document_pages = len(document_urls) * D_DOCUMENT_PAGES
    figures: dict[str, Any] = {
        "plain_pages_per_s_alone": round(alone, 1),
        "plain_pages_per_s_beside_documents": round(statistics.median(beside), 1),
        "plain_ratio": round(statistics.median(beside) / alone, 3),
        "plain_runs": {"alone_before": before, "beside_documents": beside, "alone_after": after},
        "control_idle_loops": {
            "loops": D_CONTROL_LOOPS,
            "runs": control,
            "plain_ratio": round(statistics.median(control) / alone, 3),
        },
        "documents": len(document_urls),
        "document_jobs": len(documents.walls_s),
        "document_pages_per_s": round(document_pages / statistics.median(documents.walls_s), 1),
        "book": book_read(),
        "goals": {"plain_ratio": D_GOAL_RATIO, "book_cpu_s": D_GOAL_BOOK_S},
    }
    print(f"scrapejobs D: {figures}", flush=True)
    return figures


class DocumentJobs:
    """Jobs of the PDFs, one after another on a thread of their own, from entering the block
    (once the first job's PDFs are being read) until it ends (the job then under way is
    waited for): every plain run in the block runs beside PDFs being read, however long it
    takes. ``walls_s``: each job's time from submission to its end."""

    def __init__(self, api: httpx.Client, urls: list[str], timeout_s: float) -> None:
        self._client = httpx.Client(base_url=api.base_url, headers=api.headers, timeout=30)
        self._urls = urls
        self._timeout_s = timeout_s
        self._stop = threading.Event()
        self._reading = threading.Event()
        self._thread = threading.Thread(target=self._run, name="document-jobs", daemon=True)
        self.walls_s: list[float] = []
        self.error: BaseException | None = None

    def __enter__(self) -> DocumentJobs:
        self._thread.start()
        if not self._reading.wait(timeout=self._timeout_s):
            raise TimeoutError("no PDF job started reading")
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=self._timeout_s)
        self._client.close()
        if self.error is not None:
            raise self.error

    def _run(self) -> None:
        from bench.stack_run import submit_job, wait_completed

        try:
            while not self._stop.is_set():
                started = time.perf_counter()
                job, _ = submit_job(self._client, self._urls, options={"formats": ["markdown"]})
                while not self._reading.is_set() and not self._read_some(job["id"]):
                    time.sleep(0.05)
                self._reading.set()
                done = wait_completed(self._client, job["id"], timeout_s=self._timeout_s)
                assert done["counts"]["succeeded"] == len(self._urls), done["counts"]
                self.walls_s.append(time.perf_counter() - started)
        except BaseException as exc:  # raised in the measuring thread, on leaving the block
            self.error = exc
            self._reading.set()

    def _read_some(self, job_id: str) -> bool:
        counts = self._client.get(f"/v1/jobs/{job_id}").json()["counts"]
        return bool(counts.get("running") or counts.get("succeeded"))


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
