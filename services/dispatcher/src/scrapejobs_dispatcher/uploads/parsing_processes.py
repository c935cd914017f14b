"""Uploads read in processes of their own, each within a CPU budget and a memory limit held by
the kernel (``shared/process_limits.py``), as the worker's extraction processes read pages:
an upload is a stranger's file (a decompression bomb, a spreadsheet of a million rows).

Each upload gets a new process, forked by multiprocessing's fork server (started once, with
the extraction modules loaded, before the dispatcher's threads and clients: a child inherits
none of them and starts in milliseconds) and ended when it answered. At most ``concurrency``
run at once in an instance; the others wait their turn. A child past its CPU budget is ended
by the kernel (``SIGXCPU``): the upload fails ``extraction_timeout``; one whose allocation
fails past its memory limit answers ``extraction_memory`` (or, in native code such as PDFium
inflating a decompression bomb, aborts: ``SIGABRT`` is taken for the same); one that stops
answering is killed after ``3 x budget + 5`` s of wall time."""

from __future__ import annotations

import asyncio
import multiprocessing
import pickle
import signal
import time
from dataclasses import replace
from datetime import UTC, datetime
from multiprocessing.connection import Connection

from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import TaskOutcome
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.pipeline.page_outcome import extract_outcome
from scrapejobs_shared.ports.fetcher import FetchResponse
from scrapejobs_shared.process_limits import limit_cpu, limit_memory

from .parsing_port import EXTRACTION_MEMORY, EXTRACTION_TIMEOUT
from .upload import Upload

PRELOADED = ["scrapejobs_shared.pipeline.page_outcome"]  # loaded once, by the fork server


def read_upload(upload: Upload, spec: JobSpec) -> TaskOutcome:
    """``upload`` read as the worker reads a page it fetched with a ``200`` (its
    ``elapsed_ms``: the read's)."""
    started = time.monotonic()
    media_type = upload.media_type()
    headers = {"content-type": media_type} if media_type else {}
    response = FetchResponse(upload.url, 200, headers, upload.data, 0)
    outcome = extract_outcome(response, spec).outcome
    elapsed_ms = round((time.monotonic() - started) * 1000)
    return replace(outcome, fetched_at=datetime.now(UTC), elapsed_ms=elapsed_ms)


def _failed(error: str) -> TaskOutcome:
    return TaskOutcome(
        TaskStatus.FAILED, http_status=200, error=error, fetched_at=datetime.now(UTC)
    )


class ParsingProcesses:
    def __init__(self, concurrency: int, budget_s: float, memory_mb: int) -> None:
        self.budget_s = budget_s
        self.memory_mb = memory_mb
        self._slots = asyncio.Semaphore(concurrency)
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(PRELOADED)

    async def outcome(self, upload: Upload, spec: JobSpec) -> TaskOutcome:
        async with self._slots:
            return await self._in_child(upload, spec)

    async def _in_child(self, upload: Upload, spec: JobSpec) -> TaskOutcome:
        ours, theirs = self._context.Pipe(duplex=False)
        child = self._context.Process(
            target=_serve,
            args=(theirs, upload, spec, self.budget_s, self.memory_mb),
            daemon=True,
        )
        await asyncio.to_thread(child.start)
        theirs.close()
        try:
            answer = await asyncio.to_thread(_answer, ours, 3 * self.budget_s + 5)
        finally:
            ours.close()
            if child.is_alive():
                child.kill()
            await asyncio.to_thread(child.join, 5)
        if isinstance(answer, TaskOutcome):
            return answer
        if answer == EXTRACTION_MEMORY or (answer is None and child.exitcode == -signal.SIGABRT):
            return _failed(
                f"{EXTRACTION_MEMORY}: reading the file needed more than {self.memory_mb} MiB"
            )
        if answer is None and child.exitcode == -signal.SIGXCPU:
            return _failed(
                f"{EXTRACTION_TIMEOUT}: reading the file took more than {self.budget_s:g} s of CPU"
            )
        if answer is not None:  # the reading raised: a fault of ours, said as one
            return _failed(f"internal_error: reading the file failed: {answer}")
        return _failed(
            f"{EXTRACTION_TIMEOUT}: the file could not be read within its budgets: it stopped "
            f"(exit {child.exitcode})"
        )


def _answer(conn: Connection, wait_s: float) -> object:
    """The child's answer; None when it ended (or stayed silent past ``wait_s``) without one."""
    try:
        if not conn.poll(wait_s):
            return None
        return pickle.loads(conn.recv_bytes())
    except (EOFError, OSError):
        return None


def _serve(
    conn: Connection, upload: Upload, spec: JobSpec, budget_s: float, memory_mb: int
) -> None:
    """The child: read the upload within the budgets and answer its outcome."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGXCPU, signal.SIG_DFL)  # past the budget: the process ends
    if memory_mb:
        limit_memory(memory_mb)
    limit_cpu(budget_s)
    answer: object
    try:
        answer = read_upload(upload, spec)
    except MemoryError:
        answer = EXTRACTION_MEMORY
    except Exception as exc:  # a bug: said to the dispatcher, which records it
        answer = f"{type(exc).__name__}: {exc}"
    conn.send_bytes(pickle.dumps(answer, pickle.HIGHEST_PROTOCOL))
