"""Calls run in processes of their own, each within its budget, held by the kernel
(ports/budgeted_work.py).

A few child processes, forked by multiprocessing's fork server (processes/children.py), each
running one call at a time and kept for the next. Before each call a child sets its own limits
(processes/limits.py): CPU
(``RLIMIT_CPU`` at what it used plus the budget: past it ``SIGXCPU`` ends the process, even
inside C code) and memory (``RLIMIT_AS`` at its size at start plus the budget's: past it an
allocation fails). It measures its answer, pickled, against the budget's output size before it
sends it. A call that has not answered within the budget's wall time is killed. A child that
was stopped, ran out of memory or died is replaced; the service's event loop only waits on a
pipe.
"""

from __future__ import annotations

import asyncio
import os
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import TypeVar, cast

from scrapejobs_shared.errors import WorkFailed
from scrapejobs_shared.ports.budgeted_work import Budget, Exceeded, OverBudget
from scrapejobs_shared.processes.children import (
    ChildFailedToStart,
    begin,
    ended_by,
    fork_server,
    spawn,
)
from scrapejobs_shared.processes.limits import address_space, allow_growth, limit_cpu
from scrapejobs_shared.processes.pipes import put, readable, stop, take
from scrapejobs_shared.tenant_turns import TenantTurns

T = TypeVar("T")
OK, RAISED, MEMORY, OUTPUT = "ok", "raised", "memory", "output"


class BudgetedWorkCrashed(WorkFailed):
    """The process running a call died of something else than its budget (a crash, killed
    from outside): transient, the work may be tried again."""


@dataclass(eq=False)
class _Child:
    process: BaseProcess
    conn: Connection


class BudgetedProcesses:
    """At most ``processes`` calls at once, each in a child of its own; the others wait, their
    owners (``Budget.owner``) taking turns."""

    def __init__(self, processes: int = 1, *, background: bool = False) -> None:
        """``background``: the children take the CPU only when nothing else wants it."""
        if processes < 1:
            raise ValueError("at least one process")
        self._turns = TenantTurns(processes)
        self._idle: list[_Child] = []
        self._background = background
        self._context = fork_server()
        self._closed = False

    async def run(self, budget: Budget, call: Callable[..., T], *args: object) -> T:
        async with self._turns.turn(budget.owner):
            child = self._idle.pop() if self._idle else await self._spawn()
            if not child.process.is_alive():  # died while idle (killed from outside)
                _stop(child)
                child = await self._spawn()
            kept = False
            try:
                answer = await self._call(child, budget, call, args)
                kept = answer[0] in (OK, RAISED) and not self._closed
            finally:
                if kept:
                    self._idle.append(child)
                else:
                    _stop(child)
        kind, value = answer
        if kind == OK:
            return cast(T, value)
        if kind == RAISED:
            raise cast(BaseException, value)
        if kind in (MEMORY, OUTPUT, "cpu", "wall"):
            raise OverBudget(budget, cast(Exceeded, kind))
        raise BudgetedWorkCrashed(f"the process running the {budget.name} died ({value})")

    async def _call(
        self, child: _Child, budget: Budget, call: Callable[..., object], args: tuple[object, ...]
    ) -> tuple[str, object]:
        try:
            put(child.conn, (call, args, budget))
            await asyncio.wait_for(readable(child.conn), budget.wall_s)
            os.set_blocking(child.conn.fileno(), True)  # the answer is read whole once it comes
            return cast(tuple[str, object], take(child.conn))
        except TimeoutError:  # a process past its CPU ends at once: this one waited
            _stop(child)
            return "wall", None
        except (EOFError, OSError):
            _stop(child)
            code = child.process.exitcode
            ending = ended_by(code, bool(budget.memory_mb))
            return ending, None if ending != "died" else f"exit code {code}"

    async def _spawn(self) -> _Child:
        try:
            return _Child(*await spawn(self._context, serve, (self._background,), "budgeted"))
        except ChildFailedToStart as exc:
            raise BudgetedWorkCrashed(str(exc)) from None

    async def close(self) -> None:
        self._closed = True
        for child in self._idle:
            _stop(child)
        self._idle.clear()


def _stop(child: _Child) -> None:
    stop(child.process, child.conn)


def serve(conn: Connection, background: bool = False) -> None:
    """A child: run each call it is sent within the call's budget and answer it."""
    begin(conn, background)
    base = address_space()
    cpu_limit = 0
    while True:
        try:
            call, args, budget = cast(
                tuple[Callable[..., object], tuple[object, ...], Budget], take(conn)
            )
        except (EOFError, OSError):
            return
        allow_growth(base, budget.memory_mb)
        cpu_limit = limit_cpu(budget.cpu_s, cpu_limit)
        answer = _answer(call, args, budget)
        conn.send_bytes(answer)
        if answer == _MEMORY:
            return  # answered, then replaced: its heap is not trusted


_MEMORY = pickle.dumps((MEMORY, None), pickle.HIGHEST_PROTOCOL)


def _answer(call: Callable[..., object], args: tuple[object, ...], budget: Budget) -> bytes:
    try:
        data = pickle.dumps((OK, call(*args)), pickle.HIGHEST_PROTOCOL)
    except MemoryError:
        return _MEMORY
    except Exception as exc:
        try:
            data = pickle.dumps((RAISED, exc), pickle.HIGHEST_PROTOCOL)
            pickle.loads(data)  # one that pickles but cannot be made again (its __init__)
        except Exception:  # an exception that does not cross whole: its text
            data = pickle.dumps((RAISED, WorkFailed(f"{type(exc).__name__}: {exc}")))
    if budget.output_bytes and len(data) > budget.output_bytes:
        return pickle.dumps((OUTPUT, None), pickle.HIGHEST_PROTOCOL)
    return data
