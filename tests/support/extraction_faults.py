"""Extract functions for the extraction processes' tests (module-level: a spawned process
imports them by name)."""

from __future__ import annotations

import gc
import os
import time

from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import TaskOutcome
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.outcomes.page_outcome import ExtractedPage
from scrapejobs_shared.ports.fetcher import FetchResponse


def raising(response: FetchResponse, spec: JobSpec) -> ExtractedPage:
    raise RuntimeError(f"a bug on {response.url}")


def whose(response: FetchResponse, spec: JobSpec) -> ExtractedPage:
    """The page's data says which process extracted it; a URL ending in ``/slow`` keeps that
    process busy for a second first (asleep: no CPU budget spent)."""
    if response.url.endswith("/slow"):
        time.sleep(1.0)
    return ExtractedPage(TaskOutcome(TaskStatus.SUCCEEDED, 200, {"pid": os.getpid()}))


def sharing(response: FetchResponse, spec: JobSpec) -> ExtractedPage:
    """The page's data says how many objects the process inherited frozen and how much of its
    memory is its own (kB: pages not shared with the fork server or another process)."""
    private_kb = 0
    with open("/proc/self/smaps_rollup", encoding="ascii") as rollup:
        for line in rollup:
            if line.startswith(("Private_Clean:", "Private_Dirty:")):
                private_kb += int(line.split()[1])
    data = {"frozen": gc.get_freeze_count(), "private_kb": private_kb}
    return ExtractedPage(TaskOutcome(TaskStatus.SUCCEEDED, 200, data))


def how_nice(response: FetchResponse, spec: JobSpec) -> ExtractedPage:
    """The page's data says which process read it and at what CPU priority (its nice value
    and scheduling policy)."""
    data = {"pid": os.getpid(), "nice": os.nice(0), "policy": os.sched_getscheduler(0)}
    return ExtractedPage(TaskOutcome(TaskStatus.SUCCEEDED, 200, data))


def answering_large(response: FetchResponse, spec: JobSpec) -> ExtractedPage:
    """Answers 16 MB after a little work: an answer written in many pipe-fulls."""
    time.sleep(0.05)
    return ExtractedPage(TaskOutcome(TaskStatus.SUCCEEDED, 200, {"text": "x" * (16 << 20)}))
