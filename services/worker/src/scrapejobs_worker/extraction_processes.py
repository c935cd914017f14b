"""Pages extracted in processes of their own, each page within a time budget.

Extraction and the pipeline's stages before ``ai`` are CPU work on pages strangers wrote,
with expressions strangers wrote (an XPath can be cubic in the page's size). On the event
loop, one such page would stop the process: its other batches, its health checks, its acks.
Here every page runs in one of a few child processes, one page at a time each. They are forked
by multiprocessing's fork server (a process started once, with the extraction modules loaded,
before any of the worker's threads, clients or connections exist, so children inherit none of
them and start in milliseconds, not the second a fresh interpreter takes); a
page still running when its budget is spent has its process killed (SIGKILL, the only bound
that holds for C code), a new process takes its place, and the caller gets
:class:`ExtractionOverBudget`. A process that dies otherwise (a crash, the kernel's OOM
killer) gives :class:`ExtractionCrashed`. The event loop only waits on a pipe.

The budget runs from the moment the page reaches its process (waiting for a free process is
not counted); that process does nothing else meanwhile, so it is the page's own time.

Costs, measured (bench/README.md): a page's response, its result and, once per job and
process, its job's spec cross a pipe pickled; about 0.1 ms of CPU a page over extracting in
process. A generic process pool with per-task timeouts (pebble) cost 0.4 ms of the worker's
CPU a page in its own management threads, more than half an average page's extraction.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import signal
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.ports.fetcher import FetchResponse
from scrapejobs_worker.extraction_port import (
    ExtractionCrashed,
    ExtractionFailed,
    ExtractionOverBudget,
)
from scrapejobs_worker.page_extraction import ExtractedPage, extract_outcome

log = logging.getLogger(__name__)

READY = "ready"
SPECS_KEPT = 64  # jobs' specs each process keeps (the parent mirrors the same LRU)
Extract = Callable[[FetchResponse, JobSpec], ExtractedPage]


@dataclass(eq=False)
class _Child:
    process: BaseProcess
    conn: Connection
    specs: OrderedDict[int, JobSpec] = field(default_factory=OrderedDict)

    def has(self, spec: JobSpec) -> bool:
        """Whether the process holds ``spec`` (kept referenced here, so its id is not reused
        while it is listed); records the use, as the process's own LRU does."""
        key = id(spec)
        if self.specs.get(key) is spec:
            self.specs.move_to_end(key)
            return True
        return False

    def holds(self, spec: JobSpec) -> None:
        _remember(self.specs, id(spec), spec)


def _remember(specs: OrderedDict[int, JobSpec], key: int, spec: JobSpec) -> None:
    specs[key] = spec
    specs.move_to_end(key)
    while len(specs) > SPECS_KEPT:
        specs.popitem(last=False)


class ExtractionProcesses:
    """``processes`` child processes; :meth:`extract` runs one page in a free one."""

    def __init__(self, processes: int, budget_s: float, extract: Extract = extract_outcome):
        if processes < 1:
            raise ValueError("at least one extraction process")
        self.budget_s = budget_s
        self._size = processes
        self._extract = extract
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload([__name__])
        self._idle: asyncio.Queue[_Child] = asyncio.Queue()
        self._children: set[_Child] = set()
        self._starting: set[asyncio.Task[None]] = set()
        self._closed = False

    async def start(self) -> None:
        """Start the processes; pages wait for the first to be ready, not for all."""
        for _ in range(self._size):
            self._replace()

    async def extract(self, response: FetchResponse, spec: JobSpec) -> ExtractedPage:
        child = await self._idle.get()
        try:
            page = await self._run(child, response, spec)
        except BaseException:
            self._discard(child)  # mid-page, or dead: it is never handed a page again
            raise
        self._idle.put_nowait(child)
        return page

    async def _run(self, child: _Child, response: FetchResponse, spec: JobSpec) -> ExtractedPage:
        known = child.has(spec)
        try:
            child.conn.send((id(spec), None if known else spec, response))
            if not known:
                child.holds(spec)
            async with asyncio.timeout(self.budget_s):
                await _readable(child.conn)
            ok, result = child.conn.recv()
        except TimeoutError:
            raise ExtractionOverBudget(self.budget_s) from None
        except (EOFError, OSError) as exc:
            raise ExtractionCrashed(f"the extraction process died: {exc!r}") from None
        if not ok:
            raise ExtractionFailed(str(result))
        assert isinstance(result, ExtractedPage)
        return result

    def _discard(self, child: _Child) -> None:
        self._children.discard(child)
        _stop(child)
        if not self._closed:
            self._replace()

    def _replace(self) -> None:
        task = asyncio.get_running_loop().create_task(self._spawn())
        self._starting.add(task)
        task.add_done_callback(self._starting.discard)

    async def _spawn(self) -> None:
        ours, theirs = self._context.Pipe(duplex=True)
        process = self._context.Process(
            target=serve, args=(theirs, self._extract), name="extraction", daemon=True
        )
        process.start()
        theirs.close()
        child = _Child(process, ours)
        self._children.add(child)
        try:
            await _readable(ours)
            if ours.recv() != READY:
                raise EOFError("no ready message")
        except (EOFError, OSError):
            log.error("an extraction process failed to start", exc_info=True)
            self._children.discard(child)
            _stop(child)
            if not self._closed:
                await asyncio.sleep(1.0)  # do not spin on a process that cannot start
                self._replace()
            return
        if self._closed:
            _stop(child)
            return
        self._idle.put_nowait(child)

    async def close(self) -> None:
        self._closed = True
        for task in list(self._starting):
            task.cancel()
        for child in list(self._children):
            _stop(child)
        self._children.clear()

    def pids(self) -> list[int]:
        """The processes' ids (for operators and tests)."""
        return [child.process.pid for child in self._children if child.process.pid]


class ExtractionInProcess:
    """The same contract on the event loop, without isolation or a budget that holds: unit
    tests, and ``SCRAPEJOBS_EXTRACTION_PROCESSES=0`` for debugging."""

    def __init__(self, budget_s: float = 0.0, extract: Extract = extract_outcome) -> None:
        self.budget_s = budget_s
        self._extract = extract

    async def start(self) -> None:
        return None

    async def extract(self, response: FetchResponse, spec: JobSpec) -> ExtractedPage:
        return self._extract(response, spec)

    async def close(self) -> None:
        return None


async def _readable(conn: Connection) -> None:
    """Wait until ``conn`` has data (or is closed) without blocking the event loop."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()
    fd = conn.fileno()

    def readable() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, readable)
    try:
        await ready
    finally:
        loop.remove_reader(fd)


def _stop(child: _Child) -> None:
    with contextlib.suppress(OSError):
        child.conn.close()
    if child.process.is_alive():
        child.process.kill()
    child.process.join(timeout=1.0)
    with contextlib.suppress(ValueError):
        child.process.close()


def serve(conn: Connection, extract: Extract) -> None:
    """A child process: extract each page it is sent, one at a time, until the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the worker decides when it stops
    specs: OrderedDict[int, JobSpec] = OrderedDict()
    conn.send(READY)
    while True:
        try:
            key, spec, response = conn.recv()
        except (EOFError, OSError):
            return
        if spec is not None:
            _remember(specs, key, spec)
        else:
            spec = specs[key]
            specs.move_to_end(key)
        try:
            reply: tuple[bool, object] = (True, extract(response, spec))
        except Exception as exc:  # a bug: said to the worker, which records it
            reply = (False, f"{type(exc).__name__}: {exc}")
        conn.send(reply)
