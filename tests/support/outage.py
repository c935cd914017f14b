"""A dependency made to stop answering: its emulator's whole process group stopped (SIGSTOP)
and continued (SIGCONT) on the way out. Nothing is lost: requests wait unanswered, as they
do when the real service stops answering."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager

from scrapejobs_devstack.processes import ManagedProcess


@contextmanager
def paused(emulator: ManagedProcess) -> Iterator[None]:
    os.killpg(emulator.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.killpg(emulator.pid, signal.SIGCONT)
