"""Pages extracted in processes of their own, each page within a CPU budget.

Extraction and the pipeline's stages before ``ai`` are CPU work on pages strangers wrote,
with expressions strangers wrote (an XPath can be cubic in the page's size). On the event
loop, one such page would stop the process: its other batches, its health checks, its acks.
Here pages run in a few child processes, forked by multiprocessing's fork server (a process
started once with the extraction modules loaded, before any of the worker's threads, clients
or connections exist: children inherit none of them and start in milliseconds). The fork
server freezes what it loaded (processes/fork_server_freeze.py), so children share those modules'
memory instead of copying it.

**The budget** is CPU time, held by the kernel: before each page a child sets its own
``RLIMIT_CPU`` to the CPU it has used plus the budget (whole seconds, rounded up), so a page
past it is ended by ``SIGXCPU`` even inside C code (libxml2's XPath), where no timer or
exception could reach. The caller gets :class:`ExtractionOverBudget`; a new process takes
the dead one's place. A document's page read by OCR adds a budget of its own as it starts
(processes/limits.extend_cpu). As a backstop for a child that stops using CPU without
answering, the worker kills one that has not answered a message in
``3 x (budget + OCR's pages x their budget + 1) x pages + 5`` s. A
child that dies otherwise (the kernel's OOM killer, a crash) gives :class:`ExtractionCrashed`.

**Memory** is held by the kernel too: a child's address space may grow by at most
``memory_mb`` past what it held when it started (``RLIMIT_AS``), so a page whose expressions
build huge strings (an XPath ``re:replace`` over the whole page with a long replacement grew a
process past 780 MB within 4 s of CPU) fails its allocation, not the instance: the page fails
:class:`ExtractionOverMemory`, the child answers its message and is replaced (a process that
ran out of memory is not trusted with the next page), and the worker goes on. Native code
whose allocation fails past the limit aborts its process instead (PDFium, inflating a PDF's
decompression bomb): a child ended by ``SIGABRT`` on a page alone is that page's
:class:`ExtractionOverMemory` too.

**Messages**: a free child takes every page waiting (up to :data:`PAGES_PER_MESSAGE`) in one
message and answers them in one: under load, the pipe's round trip, the wake-ups and the
event loop's work are paid once for many pages. **One child first**: pages go to the
longest-serving child while it keeps up (a page takes it a millisecond or two); the others
take pages only once the oldest waiting page has waited :data:`SPILL_S` for it (a page deep in
its budget, or more pages than one process extracts). Spreading every page over idle children
instead woke a process per page, one page a message: 0.3 ms more of the machine's CPU a page
(bench/README.md, "One child first"). When a child dies with several pages, they
are sent again one per message, so that only the page that caused it fails. Each job's spec
crosses once per process (both sides keep the same :data:`SPECS_KEPT` most recent).
The event loop only reads a pipe when a child answers.

Costs, measured (bench/README.md, "session 11"). A generic process pool with per-task
timeouts (pebble) cost 0.4 ms of the worker's CPU a page in its own management threads; one
page per message here cost 0.28 ms.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, cast

from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.outcomes.page_outcome import ExtractedPage, extract_outcome
from scrapejobs_shared.ports.fetcher import FetchResponse
from scrapejobs_shared.processes.children import (
    ChildFailedToStart,
    begin,
    ended_by,
    fork_server,
    spawn,
)
from scrapejobs_shared.processes.limits import limit_cpu
from scrapejobs_shared.processes.pipes import put, stop, take
from scrapejobs_worker.extraction.extraction_port import (
    ExtractionCrashed,
    ExtractionFailed,
    ExtractionOverBudget,
    ExtractionOverMemory,
)

log = logging.getLogger(__name__)

SPECS_KEPT = 64  # jobs' specs each process keeps (the parent mirrors the same LRU)
PAGES_PER_MESSAGE = 16
SPILL_S = 0.025  # a page waiting this long for the first child goes to another one
OUT_OF_MEMORY = "out of memory"  # a child's answer for a page past its memory
Extract = Callable[[FetchResponse, JobSpec], ExtractedPage]


@dataclass(eq=False, slots=True)
class _Page:
    response: FetchResponse
    spec: JobSpec
    done: asyncio.Future[ExtractedPage]
    since: float  # loop time it started waiting
    alone: bool = False  # sent again by itself: its last message's process died


@dataclass(eq=False)
class _Child:
    process: BaseProcess
    conn: Connection
    rank: int  # started after every child of a lower rank: the lowest living one goes first
    specs: OrderedDict[int, JobSpec] = field(default_factory=OrderedDict)
    pages: list[_Page] = field(default_factory=list)  # the message it is working on
    backstop: asyncio.TimerHandle | None = None
    killed: bool = False  # by the backstop
    ready: bool = False  # said so: it takes pages

    def sent_before(self, spec: JobSpec) -> bool:
        """Whether the process already holds ``spec``; either way it does once this message
        is sent. Kept referenced here, so its id is not reused while listed; every use is
        recorded as the process's own LRU records it."""
        key = id(spec)
        if self.specs.get(key) is spec:
            self.specs.move_to_end(key)
            return True
        _remember(self.specs, key, spec)
        return False


def _remember(specs: OrderedDict[int, JobSpec], key: int, spec: JobSpec) -> None:
    specs[key] = spec
    specs.move_to_end(key)
    while len(specs) > SPECS_KEPT:
        specs.popitem(last=False)


class ExtractionProcesses:
    """``processes`` child processes; :meth:`extract` has one page extracted by one of them."""

    def __init__(
        self,
        processes: int,
        budget_s: float,
        extract: Extract = extract_outcome,
        memory_mb: int = 0,
        background: bool = False,
        extendable_s: float = 0.0,
        pausable: bool = False,
    ):
        """``memory_mb``: what a child may grow past its size at start (0: no limit);
        ``background``: its children take the CPU only when nothing else wants it;
        ``extendable_s``: CPU a page may add to its budget as it goes (a document's pages read
        by OCR, each within a budget of its own), counted in the backstop's wait only;
        ``pausable``: its children may be paused (``SIGSTOP``: documents_yield.py), so each is
        continued before its answer is read (the read blocks: a paused writer would hold the
        event loop, and with it whatever would continue it)."""
        if processes < 1:
            raise ValueError("at least one extraction process")
        self.budget_s = budget_s
        self.memory_mb = memory_mb
        self.background = background
        self.extendable_s = extendable_s
        self.pausable = pausable
        self._size = processes
        self._extract = extract
        self._context = fork_server(preload=[__name__])
        self._waiting: deque[_Page] = deque()
        self._idle: list[_Child] = []
        self._children: set[_Child] = set()
        self._starting: set[asyncio.Task[None]] = set()
        self._spawned = 0
        self._spill: asyncio.TimerHandle | None = None
        self._closed = False

    async def start(self) -> None:
        """Start the processes; pages wait for the first to be ready, not for all."""
        for _ in range(self._size):
            self._replace()

    async def extract(self, response: FetchResponse, spec: JobSpec) -> ExtractedPage:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[ExtractedPage] = loop.create_future()
        self._waiting.append(_Page(response, spec, done, loop.time()))
        self._dispatch()
        return await done

    def _dispatch(self) -> None:
        while self._idle and self._waiting:
            child = self._next_child()
            if child is None:  # the first child is busy: its next message, or a spill later
                self._spill_at(self._waiting[0].since + SPILL_S)
                return
            self._idle.remove(child)
            pages = [self._waiting.popleft()]
            while (
                not pages[0].alone
                and self._waiting
                and not self._waiting[0].alone
                and len(pages) < PAGES_PER_MESSAGE
            ):
                pages.append(self._waiting.popleft())
            pages = [page for page in pages if not page.done.done()]  # callers gone
            if pages:
                self._send(child, pages)
            else:
                self._idle.append(child)

    def _next_child(self) -> _Child | None:
        """The idle child of the lowest rank, unless a child of a lower rank is busy and the
        oldest waiting page has not waited :data:`SPILL_S` yet (it waits for that one)."""
        child = min(self._idle, key=lambda idle: idle.rank)
        ahead = any(busy.pages and busy.rank < child.rank for busy in self._children)
        if not ahead or asyncio.get_running_loop().time() >= self._waiting[0].since + SPILL_S:
            return child
        return None

    def _spill_at(self, when: float) -> None:
        if self._spill is None:
            self._spill = asyncio.get_running_loop().call_at(when, self._spilled)

    def _spilled(self) -> None:
        self._spill = None
        self._dispatch()

    def _send(self, child: _Child, pages: list[_Page]) -> None:
        message = [
            (id(page.spec), None if child.sent_before(page.spec) else page.spec, page.response)
            for page in pages
        ]
        child.pages = pages
        try:
            put(child.conn, message)
        except (OSError, ValueError):
            self._died(child)
            return
        backstop_s = 3 * (self.budget_s + self.extendable_s + 1) * len(pages) + 5
        loop = asyncio.get_running_loop()
        child.backstop = loop.call_later(backstop_s, self._overdue, child)

    def _answered(self, child: _Child) -> None:
        """The child's pipe is readable: its answers to a message, or its end."""
        if self.pausable and child.process.pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.process.pid, signal.SIGCONT)
        try:
            answers = cast(list[tuple[bool, Any]], take(child.conn))
        except (EOFError, OSError):
            self._died(child)
            return
        if child.backstop is not None:
            child.backstop.cancel()
        pages, child.pages = child.pages, []
        exhausted = False
        for page, (ok, value) in zip(pages, answers, strict=True):
            exhausted = exhausted or (not ok and value == OUT_OF_MEMORY)
            if page.done.done():
                continue
            if ok:
                page.done.set_result(value)
            elif value == OUT_OF_MEMORY:
                page.done.set_exception(ExtractionOverMemory(self.memory_mb))
            else:
                page.done.set_exception(ExtractionFailed(str(value)))
        if exhausted:  # it ends after this answer: a new process takes its place
            self._discard(child)
        else:
            self._idle.append(child)
        self._dispatch()

    def _overdue(self, child: _Child) -> None:
        child.killed = True
        if child.process.is_alive():
            child.process.kill()  # its pipe closes: _answered sees the end

    def _died(self, child: _Child) -> None:
        pages, child.pages = child.pages, []
        if child.backstop is not None:
            child.backstop.cancel()
        self._discard(child)  # joined: its exit code is known
        exitcode = child.process.exitcode
        if len(pages) == 1:
            [page] = pages
            if not page.done.done():
                error: Exception
                ending = ended_by(exitcode, bool(self.memory_mb))
                if child.killed or ending == "cpu":
                    error = ExtractionOverBudget(self.budget_s)
                elif ending == "memory":  # the page's own doing
                    error = ExtractionOverMemory(self.memory_mb)
                else:
                    error = ExtractionCrashed(f"the extraction process died (exit code {exitcode})")
                page.done.set_exception(error)
        else:  # which page did it? each goes again alone: only that one fails
            for page in reversed(pages):
                page.alone = True
                self._waiting.appendleft(page)
        self._dispatch()

    def _discard(self, child: _Child) -> None:
        self._children.discard(child)
        with contextlib.suppress(ValueError):
            asyncio.get_running_loop().remove_reader(child.conn.fileno())
        _stop(child)
        if not self._closed:
            self._replace()

    def _replace(self) -> None:
        task = asyncio.get_running_loop().create_task(self._spawn())
        self._starting.add(task)
        task.add_done_callback(self._starting.discard)

    async def _spawn(self) -> None:
        args = (self._extract, self.budget_s, self.memory_mb, self.background)
        try:
            process, ours = await spawn(self._context, serve, args, "extraction")
        except ChildFailedToStart:
            log.error("an extraction process failed to start", exc_info=True)
            if not self._closed:
                await asyncio.sleep(1.0)  # do not spin on a process that cannot start
                self._replace()
            return
        self._spawned += 1
        child = _Child(process, ours, self._spawned)
        if self._closed:
            _stop(child)
            return
        self._children.add(child)
        asyncio.get_running_loop().add_reader(ours.fileno(), self._answered, child)
        # uvloop's add_reader makes the pipe non-blocking: a message or an answer larger than
        # the pipe's buffer (a 300 KB page) would then be cut by EAGAIN mid-write or mid-read
        # and taken for a dead process. Blocking is safe here: a message goes only to an idle
        # child (waiting on its end), an answer is read only once it started to arrive.
        os.set_blocking(ours.fileno(), True)
        child.ready = True
        self._idle.append(child)
        self._dispatch()

    async def close(self) -> None:
        self._closed = True
        if self._spill is not None:
            self._spill.cancel()
            self._spill = None
        for task in list(self._starting):
            task.cancel()
        for child in list(self._children):
            with contextlib.suppress(ValueError, OSError):
                asyncio.get_running_loop().remove_reader(child.conn.fileno())
            _stop(child)
        self._children.clear()
        for page in self._waiting:
            if not page.done.done():
                page.done.set_exception(ExtractionCrashed("the worker is stopping"))
        self._waiting.clear()

    def working_pids(self) -> list[int]:
        """The ids of the processes working on a message now."""
        return [c.process.pid for c in self._children if c.pages and c.process.pid]

    def pids(self) -> list[int]:
        """The ids of the processes that take pages (started and ready; for operators and
        tests)."""
        return [c.process.pid for c in self._children if c.ready and c.process.pid]


class ExtractionInProcess:
    """The same contract on the event loop, without isolation or a budget that holds: unit
    tests, and ``SCRAPEJOBS_EXTRACTION_PROCESSES=0`` for debugging."""

    def __init__(self, extract: Extract = extract_outcome) -> None:
        self._extract = extract

    async def start(self) -> None:
        return None

    async def extract(self, response: FetchResponse, spec: JobSpec) -> ExtractedPage:
        return self._extract(response, spec)

    async def close(self) -> None:
        return None


def _stop(child: _Child) -> None:
    stop(child.process, child.conn)


def serve(
    conn: Connection,
    extract: Extract,
    budget_s: float,
    memory_mb: int = 0,
    background: bool = False,
) -> None:
    """A child process: extract the pages of each message it is sent, each within the CPU
    budget (past it the kernel ends the process) and the memory limit (past it the page fails
    and the process ends once it answered), and answer them together."""
    specs: OrderedDict[int, JobSpec] = OrderedDict()
    begin(conn, background, memory_mb)
    exhausted = False
    cpu_limit = 0
    while not exhausted:
        try:
            message = cast(list[tuple[int, JobSpec | None, FetchResponse]], take(conn))
        except (EOFError, OSError):
            return
        answers: list[tuple[bool, object]] = []
        for key, spec, response in message:
            if spec is not None:
                _remember(specs, key, spec)
            else:
                spec = specs[key]
                specs.move_to_end(key)
            cpu_limit = limit_cpu(budget_s, cpu_limit)
            try:
                answers.append((True, extract(response, spec)))
            except MemoryError:
                answers.append((False, OUT_OF_MEMORY))
                exhausted = True  # answered, then replaced: its heap is not trusted
            except Exception as exc:  # a bug: said to the worker, which records it
                answers.append((False, f"{type(exc).__name__}: {exc}"))
        put(conn, answers)
