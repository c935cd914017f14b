"""A child process's life, as both runners live it: forked by multiprocessing's fork server
(started before the service's threads and clients: a child inherits none of them, and, with
modules to preload, shares what the fork server loaded and froze), it sets its own signals,
priority and memory limit, says it is ready, then serves its pipe; when it ends, its exit code
says whether its CPU budget or its memory ended it, or something else did."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerContext
from multiprocessing.process import BaseProcess
from typing import Literal

from scrapejobs_shared.errors import WorkFailed

from .limits import limit_memory, run_in_background
from .pipes import put, readable, stop, take

READY = "ready"
# imported by the fork server after the modules it preloads (never elsewhere: it freezes them)
FORK_SERVER_FREEZE = "scrapejobs_shared.processes.fork_server_freeze"
Ending = Literal["cpu", "memory", "died"]


class ChildFailedToStart(WorkFailed):
    """A child process died before it said it was ready."""


def fork_server(preload: Sequence[str] = ()) -> ForkServerContext:
    """Multiprocessing's fork server context; ``preload``: modules it imports (then freezes)
    once, so that every child starts with them loaded and shares their memory."""
    context = multiprocessing.get_context("forkserver")
    if preload:
        context.set_forkserver_preload([*preload, FORK_SERVER_FREEZE])
    return context


async def spawn(
    context: ForkServerContext,
    target: Callable[..., None],
    args: tuple[object, ...],
    name: str,
) -> tuple[BaseProcess, Connection]:
    """A child running ``target(conn, *args)``, once it said it is ready (its pipe blocking:
    a message is read whole once it started to arrive); ``ChildFailedToStart`` otherwise."""
    ours, theirs = context.Pipe(duplex=True)
    process = context.Process(target=target, args=(theirs, *args), name=name, daemon=True)
    # in a thread: the first start launches the fork server and waits for it to import what
    # it preloads (a second or more), which must not hold up the service's event loop
    await asyncio.to_thread(process.start)
    theirs.close()
    try:
        await readable(ours)
        os.set_blocking(ours.fileno(), True)
        if take(ours) != READY:
            raise EOFError("no ready message")
    except (EOFError, OSError):
        stop(process, ours)
        raise ChildFailedToStart(f"a {name} process failed to start") from None
    except BaseException:  # cancelled while it started: it never serves
        stop(process, ours)
        raise
    return process, ours


def begin(conn: Connection, background: bool = False, memory_mb: int = 0) -> None:
    """A child's start: the service decides when it stops (SIGINT ignored), past its CPU
    budget the kernel ends it (SIGXCPU), with ``background`` it takes the CPU only when nothing
    else wants it, with ``memory_mb`` its address space grows at most that much; then ready."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGXCPU, signal.SIG_DFL)
    if background:
        run_in_background()
    if memory_mb:
        limit_memory(memory_mb)
    put(conn, READY)


def ended_by(exitcode: int | None, memory_limited: bool) -> Ending:
    """What ended a child: its CPU budget (SIGXCPU), its memory (native code aborts when an
    allocation fails past the limit: PDFium inflating a decompression bomb), or else."""
    if exitcode == -signal.SIGXCPU:
        return "cpu"
    if exitcode == -signal.SIGABRT and memory_limited:
        return "memory"
    return "died"
