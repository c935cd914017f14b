"""Pages extracted in processes of their own: the same outcome as in process, a page over its
budget stopped (its process killed and replaced) while the event loop keeps serving, a process
killed from outside noticed, a bug reported, and each job's spec used for its own pages."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from scrapejobs_shared.domain.jobspec import JobRequest, JobSpec
from scrapejobs_shared.outcomes.page_outcome import extract_outcome
from scrapejobs_shared.ports.fetcher import FetchResponse
from scrapejobs_worker.extraction.documents_apart import DocumentsApart
from scrapejobs_worker.extraction.extraction_port import (
    ExtractionCrashed,
    ExtractionFailed,
    ExtractionOverBudget,
    ExtractionOverMemory,
)
from scrapejobs_worker.extraction.extraction_processes import (
    SPECS_KEPT,
    SPILL_S,
    ExtractionProcesses,
)
from support.document_bombs import flate_bomb_pdf
from support.extraction_faults import how_nice, raising, whose
from support.loop_ticks import ticking

pytestmark = pytest.mark.timeout(120)

PAGE = b"<html><head><title>T</title></head><body><h1>Hello</h1><p class=p>12.50</p></body></html>"
# 2,000 elements: the cubic XPath below would take hours on it
BIG = b"<html><body>" + b"<div><p>x</p></div>" * 1000 + b"</body></html>"
CUBIC = "count(//*[count(//*[count(//*) > 0]) > 0])"


def spec(extract: dict[str, object]) -> JobSpec:
    return JobSpec.from_request(
        JobRequest.model_validate({"url": "http://a.test/", "extract": extract})
    )


def response(body: bytes = PAGE) -> FetchResponse:
    return FetchResponse("http://a.test/", 200, {"content-type": "text/html"}, body, 3)


async def _started(pool: ExtractionProcesses, count: int) -> None:
    for _ in range(200):
        if len(pool.pids()) == count:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{count} extraction processes did not start")


@pytest.fixture
async def processes() -> AsyncIterator[ExtractionProcesses]:
    pool = ExtractionProcesses(2, budget_s=1.0)
    await pool.start()
    await _started(pool, 2)  # both processes (they start beside the caller)
    yield pool
    await pool.close()


async def test_a_page_comes_out_as_it_does_in_process(processes: ExtractionProcesses) -> None:
    job = spec({"title": {"css": "h1"}, "price": {"css": ".p", "re": r"([\d.]+)", "type": "float"}})
    page = await processes.extract(response(), job)
    assert page == extract_outcome(response(), job)
    assert page.outcome.data == {"title": "Hello", "price": 12.5}


async def test_a_page_over_budget_is_stopped_and_the_loop_keeps_serving(
    processes: ExtractionProcesses,
) -> None:
    before = set(processes.pids())
    async with ticking() as ticks:
        started = time.monotonic()
        with pytest.raises(ExtractionOverBudget):
            await processes.extract(response(BIG), spec({"n": {"xpath": CUBIC}}))
        took = time.monotonic() - started
    assert 1.0 <= took < 10.0
    assert ticks.count >= 30  # the event loop ran all along (100 ticks a second when free)
    # the killed process is gone, a new one takes its place, and pages go on
    killed = before - set(processes.pids())
    assert len(killed) == 1
    page = await processes.extract(response(), spec({"title": {"css": "h1"}}))
    assert page.outcome.data == {"title": "Hello"}
    await asyncio.sleep(0)
    for _ in range(100):
        if len(processes.pids()) == 2 and not set(processes.pids()) & killed:
            break
        await asyncio.sleep(0.1)
    assert len(processes.pids()) == 2 and not set(processes.pids()) & killed


async def test_a_process_killed_from_outside_is_a_crash_and_replaced() -> None:
    pool = ExtractionProcesses(1, budget_s=30.0)
    await pool.start()
    try:
        await pool.extract(response(), spec({"title": {"css": "h1"}}))  # the process is up
        [pid] = pool.pids()
        running = asyncio.create_task(pool.extract(response(BIG), spec({"n": {"xpath": CUBIC}})))
        await asyncio.sleep(0.5)  # it is inside the page
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(ExtractionCrashed):
            await running
        page = await pool.extract(response(), spec({"title": {"css": "h1"}}))
        assert page.outcome.data == {"title": "Hello"}
    finally:
        await pool.close()


async def test_a_bug_in_extraction_is_reported_and_the_process_goes_on() -> None:
    pool = ExtractionProcesses(1, budget_s=5.0, extract=raising)
    await pool.start()
    try:
        with pytest.raises(ExtractionFailed, match=r"RuntimeError: a bug on http://a\.test/"):
            await pool.extract(response(), spec({"t": {"css": "h1"}}))
        with pytest.raises(ExtractionFailed):
            await pool.extract(response(), spec({"t": {"css": "h1"}}))
    finally:
        await pool.close()


async def test_each_job_s_pages_use_its_own_spec(processes: ExtractionProcesses) -> None:
    jobs = [spec({f"f{n}": {"css": "h1"}}) for n in range(SPECS_KEPT + 10)]
    for round_ in range(2):  # the second round finds some specs kept, others evicted
        pages = await asyncio.gather(*(processes.extract(response(), job) for job in jobs))
        for n, page in enumerate(pages):
            assert page.outcome.data == {f"f{n}": "Hello"}, (round_, n)


async def test_in_a_message_of_many_pages_only_the_one_over_budget_fails() -> None:
    pool = ExtractionProcesses(1, budget_s=1.0)
    await pool.start()
    try:
        await pool.extract(response(), spec({"title": {"css": "h1"}}))  # the process is up
        plain = spec({"title": {"css": "h1"}})
        cubic = spec({"n": {"xpath": CUBIC}})
        jobs = [plain] * 5 + [cubic] + [plain] * 5  # sent together: the one process is free
        pages = [response(BIG) if job is cubic else response() for job in jobs]
        outcomes = await asyncio.gather(
            *(pool.extract(page, job) for page, job in zip(pages, jobs, strict=True)),
            return_exceptions=True,
        )
        assert isinstance(outcomes[5], ExtractionOverBudget)
        for n, outcome in enumerate(outcomes):
            if n != 5:
                assert not isinstance(outcome, BaseException), (n, outcome)
                assert outcome.outcome.data == {"title": "Hello"}
    finally:
        await pool.close()


# an XPath that builds a string of the page's text repeated at each character: gigabytes
BALLOON = "re:replace(string(//body), '', 'g', '" + "y" * 1900 + "')"
LONG_TEXT = b"<html><body><p>" + b"z" * 200_000 + b"</p></body></html>"


async def test_a_page_past_its_memory_fails_alone_and_the_next_completes() -> None:
    pool = ExtractionProcesses(1, budget_s=30.0, memory_mb=128)
    await pool.start()
    try:
        started = time.monotonic()
        with pytest.raises(ExtractionOverMemory) as caught:
            await pool.extract(response(LONG_TEXT), spec({"all": {"xpath": BALLOON}}))
        assert "extraction_memory" in caught.value.error and "128 MiB" in caught.value.error
        assert time.monotonic() - started < 60
        # a fresh process takes its place, and the next job's page comes out whole
        job = spec({"title": {"css": "h1"}})
        page = await pool.extract(response(), job)
        assert page.outcome.data == {"title": "Hello"}
    finally:
        await pool.close()


async def test_pages_go_to_one_process_while_it_keeps_up_and_spill_past_a_slow_page() -> None:
    pool = ExtractionProcesses(2, budget_s=5.0, extract=whose)
    await pool.start()
    try:
        await _started(pool, 2)
        job = spec({"t": {"css": "h1"}})

        async def pid_of(url: str) -> int:
            page = await pool.extract(FetchResponse(url, 200, {}, PAGE, 1), job)
            assert page.outcome.data is not None
            return int(page.outcome.data["pid"])

        # a steady trickle and a burst: one process takes them all (several to a message)
        trickle = [await pid_of(f"http://a.test/{n}") for n in range(20)]
        burst = await asyncio.gather(*(pid_of(f"http://a.test/b{n}") for n in range(40)))
        assert len(set(trickle) | set(burst)) == 1
        [first] = set(trickle)
        # that process is busy with a slow page: the pages behind it go to the other one once
        # they have waited SPILL_S, long before the slow page is done
        slow = asyncio.create_task(pid_of("http://a.test/slow"))
        await asyncio.sleep(0.1)
        started = time.monotonic()
        behind = await asyncio.gather(*(pid_of(f"http://a.test/c{n}") for n in range(10)))
        assert time.monotonic() - started < 0.5 + SPILL_S
        assert first not in behind and len(set(behind)) == 1
        assert await slow == first
    finally:
        await pool.close()


SHARING = """
import asyncio, gc, json, sys
sys.path.insert(0, sys.argv[1])
from scrapejobs_shared.domain.jobspec import JobRequest, JobSpec
from scrapejobs_shared.ports.fetcher import FetchResponse
from scrapejobs_worker.extraction.extraction_processes import ExtractionProcesses
from support.extraction_faults import sharing

async def main():
    pool = ExtractionProcesses(1, budget_s=5.0, extract=sharing)
    await pool.start()
    try:
        page = await pool.extract(
            FetchResponse("http://example.test/", 200, {}, b"<h1>x</h1>", elapsed_ms=1),
            JobSpec.from_request(JobRequest.model_validate({"url": "http://example.test/"})),
        )
        print(json.dumps({**page.outcome.data, "worker_frozen": gc.get_freeze_count()}))
    finally:
        await pool.close()

asyncio.run(main())
"""


def test_the_processes_share_the_fork_server_s_modules_frozen() -> None:
    """The fork server freezes what it loaded (fork_server_freeze): a child's garbage
    collections never write to those objects, so they stay shared, not copied into each
    child (~12 MB a child before). The worker itself is never frozen. Measured in a process
    of its own: a fork server is one per process, and the test suite's may have been started
    by another test, with other modules loaded."""
    support = str(Path(__file__).resolve().parents[1])
    done = subprocess.run(
        [sys.executable, "-c", SHARING, support], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout.strip().splitlines()[-1])
    assert data["frozen"] > 10_000  # the extraction modules' objects
    assert data["private_kb"] < 15 * 1024, data  # measured ~4-8 MB; ~22 MB unfrozen
    assert data["worker_frozen"] == 0


def test_pages_and_answers_larger_than_a_pipe_cross_whole_on_uvloop() -> None:
    """uvicorn runs the worker on uvloop, whose add_reader makes the pipe non-blocking: a page
    (or its answer) larger than the pipe's buffer was cut mid-write by EAGAIN and taken for a
    dead process (a 277 KB PowerPoint file failed every attempt, ExtractionCrashed)."""
    import uvloop

    big_page = b"<html><body>" + b"<p>" + b"word " * 400_000 + b"</p></body></html>"  # 2 MB
    wanted = JobSpec.from_request(
        JobRequest.model_validate({"url": "http://a.test/", "options": {"formats": ["html"]}})
    )

    async def extract_them() -> list[int]:
        pool = ExtractionProcesses(1, budget_s=10.0)
        await pool.start()
        try:
            pages = [pool.extract(response(big_page), wanted) for _ in range(3)]
            return [
                len(str((page.outcome.data or {})["html"])) for page in await asyncio.gather(*pages)
            ]
        finally:
            await pool.close()

    sizes = uvloop.run(extract_them())
    assert all(size > 800_000 for size in sizes)  # each answer ~900 KB (the result's limit)


async def test_a_pdf_decompression_bomb_fails_alone_over_memory_and_the_next_page_is_read() -> None:
    """PDFium inflating a content stream of 768 MiB (1 MiB on the wire) past the memory limit
    aborts its process: the page fails extraction_memory (not a crash retried), and the next
    page is read by the process that takes its place."""
    pool = ExtractionProcesses(1, budget_s=10.0, memory_mb=256)
    await pool.start()
    pdf = FetchResponse(
        "http://a.test/bomb.pdf", 200, {"content-type": "application/pdf"}, flate_bomb_pdf(), 3
    )
    try:
        with pytest.raises(ExtractionOverMemory, match="needed more than 256 MiB"):
            await pool.extract(pdf, spec({}))
        page = await pool.extract(response(), spec({"title": {"css": "h1::text"}}))
        assert page.outcome.data == {"title": "Hello"}
    finally:
        await pool.close()


async def test_documents_are_read_apart_in_the_background_and_pages_as_before() -> None:
    pages = ExtractionProcesses(1, budget_s=5.0, extract=how_nice)
    documents = ExtractionProcesses(1, budget_s=5.0, extract=how_nice, background=True)
    apart = DocumentsApart(pages, documents)
    await apart.start()
    pdf = FetchResponse("http://a.test/r.pdf", 200, {}, b"%PDF-1.4 a report", 3)
    try:
        page = (await apart.extract(response(), spec({}))).outcome.data or {}
        assert documents.pids() == []  # the documents' processes start with the first one
        document = (await apart.extract(pdf, spec({}))).outcome.data or {}
        assert len(documents.pids()) == 1
    finally:
        await apart.close()
    assert page["nice"] == os.nice(0) and page["policy"] == os.sched_getscheduler(0)
    assert document["nice"] == 19 and document["policy"] == os.SCHED_IDLE
    assert page["pid"] != document["pid"]


@pytest.mark.parametrize("run", range(3))
async def test_a_paused_reader_is_continued_before_its_answer_is_read(run: int) -> None:
    """Documents' processes are paused while pages flow (documents_yield.py): one paused while
    it writes an answer larger than a pipe holds must be continued before the worker reads it,
    or the read (blocking) would hold the event loop, and the gate with it, for ever."""
    from scrapejobs_worker.extraction import documents_yield
    from scrapejobs_worker.extraction.documents_yield import DocumentsYield
    from support.extraction_faults import answering_large

    pool = ExtractionProcesses(1, budget_s=10, extract=answering_large, pausable=True)
    await pool.start()
    gate = DocumentsYield(pool.working_pids)
    original = documents_yield.PERIOD_S
    documents_yield.PERIOD_S = 0.002  # paused 80% of every 2 ms: mid-answer, surely
    gate.start()
    gate.page_started()  # pages flow all along
    try:
        for _ in range(5):
            page = await asyncio.wait_for(pool.extract(response(), spec({})), timeout=20)
            assert len(str(page.outcome.data["text"])) == 16 << 20
    finally:
        documents_yield.PERIOD_S = original
        await gate.close()
        await pool.close()
