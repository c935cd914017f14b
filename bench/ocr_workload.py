"""Workload O: scans read by OCR (issue 74).

**Accuracy and CPU**: ``O_PAGES`` pages of known text (the repository's own docs, plain prose)
written as a PDF in Times 11 pt, rasterised as a scanner would (200 dpi, a skew of up to 0.7°
either way, grey noise: scrapejobs_devstack/demo_site/scan_writer.py) and saved as an
image-only PDF, read in this process as a job's documents are read (``auto``: every page by
OCR, one thread): word F1 (bag of ``\\w+`` words, lower-cased, over all the pages) against the
text, and CPU seconds a page.

**Beside pages**: a plain job of ``D_PLAIN_PAGES`` catalog pages run ``O_RUNS`` times alone,
then as many times while jobs of ``O_SCANS`` scanned PDFs of ``O_SCAN_PAGES`` pages each run
one after another (read at the documents' idle priority), then alone again: the ratio of the
median run beside the scans to the median alone (bench/document_workload.py's method).

Goals: F1 ≥ ``O_GOAL_F1``; ≤ ``O_GOAL_CPU_S`` CPU seconds a page; the plain ratio ≥
``O_GOAL_RATIO``.
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from bench.document_workload import D_RUNS, DocumentJobs, serve_files
from scrapejobs_devstack.demo_site.scan_writer import ScanPage, made_scan, word_f1

O_PAGES = 10  # pages of the accuracy run
O_SCANS = 1  # scanned PDFs in each job beside the plain runs
O_SCAN_PAGES = 20
O_RUNS = D_RUNS
O_GOAL_F1 = 0.97
O_GOAL_CPU_S = 2.0
O_GOAL_RATIO = 0.8
DOCS = Path(__file__).resolve().parents[1] / "docs"
_MARKUP = re.compile(r"[`*_\[\]|#>]")


def prose() -> list[str]:
    """The docs' paragraphs of plain prose (no tables, lists or code), in a fixed order."""
    found = []
    for path in sorted(DOCS.glob("*.md")):
        text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
        for paragraph in text.split("\n\n"):
            said = " ".join(paragraph.split())
            if said[:1] in "|#-*<>0123456789" or len(said) < 200 or not said.isascii():
                continue
            said = re.sub(r"\(https?://[^)]*\)", "", said)
            found.append(" ".join(_MARKUP.sub("", said).split()))
    return found


def scan_pages(count: int, first: int = 0) -> list[ScanPage]:
    """``count`` pages of :func:`prose`, four paragraphs each, from paragraph ``first``."""
    paragraphs = prose()
    return [
        ScanPage([paragraphs[(first + 4 * n + k) % len(paragraphs)] for k in range(4)])
        for n in range(count)
    ]


def ocr_accuracy() -> dict[str, Any]:
    """F1 and CPU a page of ``O_PAGES`` made scans, read in this process."""
    from scrapejobs_shared.extraction.documents import DocumentOptions, read_document

    pages = scan_pages(O_PAGES)
    scan = made_scan(pages)
    read_document("application/pdf", made_scan(pages[:1]), DocumentOptions())  # engine loaded
    started = time.process_time()
    document = read_document("application/pdf", scan, DocumentOptions())
    cpu_s = time.process_time() - started
    expected = "\n\n".join(page.text() for page in pages)
    pairs = zip(pages, document.pages, strict=True)
    per_page = [word_f1(page.text(), read.text) for page, read in pairs]
    return {
        "pages": document.ocr_pages,
        "dpi": 200,
        "word_f1": round(word_f1(expected, document.text), 4),
        "word_f1_worst_page": round(min(per_page), 4),
        "cpu_s_per_page": round(cpu_s / max(document.ocr_pages, 1), 3),
    }


def serve_scans(log_dir: Path, register: Callable[[str, Callable[[], None]], None]) -> list[str]:
    files = {
        f"scan-{n}.pdf": made_scan(scan_pages(O_SCAN_PAGES, first=n * 7), seed=n)
        for n in range(O_SCANS)
    }
    url = serve_files(files, "scan-server", log_dir, register)
    return [f"{url}/{name}" for name in files]


def run_ocr_workload(
    api: httpx.Client, scan_urls: list[str], plain_urls: list[str], timeout_s: float
) -> dict[str, Any]:
    """O, as the module says."""
    from bench.stack_run import PlainRuns

    accuracy = ocr_accuracy()
    plain = PlainRuns(api, plain_urls, timeout_s)
    before = plain.measured(O_RUNS)
    with DocumentJobs(api, scan_urls, timeout_s) as scans:
        beside = [plain.one() for _ in range(O_RUNS)]
    after = plain.measured(O_RUNS)
    alone = statistics.median(before + after)
    walls = scans.walls_s
    figures: dict[str, Any] = {
        **accuracy,
        "plain_pages_per_s_alone": round(alone, 1),
        "plain_pages_per_s_beside_scans": round(statistics.median(beside), 1),
        "plain_ratio": round(statistics.median(beside) / alone, 3),
        "plain_runs": {"alone_before": before, "beside_scans": beside, "alone_after": after},
        "scans": len(scan_urls),
        "scan_pages": O_SCAN_PAGES,
        "scan_jobs": len(walls),
        "scan_pages_per_s": (
            round(len(scan_urls) * O_SCAN_PAGES / statistics.median(walls), 2) if walls else None
        ),
        "goals": {
            "word_f1": O_GOAL_F1,
            "cpu_s_per_page": O_GOAL_CPU_S,
            "plain_ratio": O_GOAL_RATIO,
        },
    }
    print(f"scrapejobs O: {figures}", flush=True)
    return figures
