"""Limits a process sets on itself before it works on what strangers sent (pages, uploads),
held by the kernel: CPU time (past it ``SIGXCPU`` ends the process, even inside C code),
address space (past it an allocation fails) and CPU priority."""

from __future__ import annotations

import contextlib
import math
import os
import resource
import time
from pathlib import Path


def limit_memory(memory_mb: int) -> None:
    """Let this process's address space grow by ``memory_mb`` past its size now."""
    size = address_space()
    if size is None:  # not Linux: no limit (Cloud Run and CI are Linux)
        return
    limit = size + (memory_mb << 20)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def allow_growth(base: int | None, memory_mb: int) -> None:
    """Let this process's address space reach ``memory_mb`` past ``base`` (its size when it
    started: :func:`address_space`), or grow without limit (``memory_mb`` 0). A soft limit
    only: the next call may set another."""
    if base is None:
        return
    soft = base + (memory_mb << 20) if memory_mb else resource.RLIM_INFINITY
    resource.setrlimit(resource.RLIMIT_AS, (soft, resource.RLIM_INFINITY))


def address_space() -> int | None:
    """This process's address space in bytes (None where /proc cannot say)."""
    try:
        pages = int(Path("/proc/self/statm").read_text(encoding="ascii").split()[0])
    except OSError:
        return None
    return pages * resource.getpagesize()


def limit_cpu(budget_s: float, current: int = 0) -> int:
    """Let this process use ``budget_s`` more seconds of CPU (rounded up), then be ended;
    the limit in force is returned. ``current``: the limit this process last set (the same
    whole second again needs no system call)."""
    soft = math.ceil(time.process_time() + budget_s)
    if soft != current:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, resource.RLIM_INFINITY))
    return soft


def run_in_background() -> None:
    """Take the CPU only when nothing else wants it: Linux's idle scheduling policy
    (``SCHED_IDLE``: the least weight, and a waking process of any other policy takes the core
    at once, wherever the kernel groups processes) after the lowest nice value (19, which a
    kernel without that policy still honours). A process may always lower its own priority."""
    os.nice(19 - os.nice(0))
    with contextlib.suppress(AttributeError, OSError):  # not Linux, or a sandbox refusing it
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def extend_cpu(budget_s: float) -> None:
    """In a process whose CPU is limited (a budgeted child's work: pages, uploads), let the
    next step use ``budget_s`` more seconds from now (rounded up): a document's each page read
    by OCR has a budget of its own. Nothing where no limit is set (a service's own process, a
    test): no limit is started here."""
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if soft == resource.RLIM_INFINITY:
        return
    resource.setrlimit(resource.RLIMIT_CPU, (math.ceil(time.process_time() + budget_s), hard))
