"""A job's progress and its estimated time to completion.

The rate is smoothed like tqdm's: an exponential moving average of the tasks finished and of
the time elapsed between two looks at the job (smoothing 0.3), their ratio the rate, so bursts
(a batch commits many results at once) do not make the estimate jump. Before the second look,
and whenever a look is too close to the previous one to say anything, the rate is the average
since the job started. The estimate is ``None`` until the job has run at least ``MIN_ELAPSED_S``
and finished a task; a finished job's is 0 and its percent 100. A crawl's total grows, and the
estimate with it.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timedelta

SMOOTHING = 0.3
MIN_ELAPSED_S = 1.0
MAX_JOBS = 10_000


@dataclass(frozen=True, slots=True)
class Progress:
    done: int
    total: int
    percent: float
    rate_per_s: float | None
    eta_s: float | None
    estimated_completion: datetime | None


@dataclass(slots=True)
class _Seen:
    done: int
    at: datetime
    mean_done: float = 0.0  # EMA of tasks finished between looks
    mean_dt: float = 0.0  # EMA of seconds between looks


class ProgressEstimator:
    """Per process: the last look at each job (bounded), to smooth its rate."""

    def __init__(self) -> None:
        self._seen: OrderedDict[str, _Seen] = OrderedDict()

    def progress(
        self,
        job_id: str,
        done: int,
        total: int,
        started_at: datetime | None,
        finished: bool,
        now: datetime,
    ) -> Progress:
        if finished:
            self._seen.pop(job_id, None)
            return Progress(done, total, 100.0, None, 0.0, now)
        percent = round(100.0 * done / total, 1) if total else 0.0
        rate = self._rate(job_id, done, started_at, now)
        if rate is None or rate <= 0:
            return Progress(done, total, percent, None, None, None)
        eta_s = max(total - done, 0) / rate
        completion = now + timedelta(seconds=eta_s)
        return Progress(done, total, percent, round(rate, 3), round(eta_s, 1), completion)

    def _rate(
        self, job_id: str, done: int, started_at: datetime | None, now: datetime
    ) -> float | None:
        if started_at is None or done <= 0:
            return None
        elapsed = (now - started_at).total_seconds()
        if elapsed < MIN_ELAPSED_S:
            return None
        average = done / elapsed
        seen = self._seen.get(job_id)
        if seen is None:
            self._remember(job_id, _Seen(done, now, average, 1.0))
            return average
        dt = (now - seen.at).total_seconds()
        if dt <= 0:
            return seen.mean_done / seen.mean_dt if seen.mean_dt else average
        seen.mean_done = SMOOTHING * max(done - seen.done, 0) + (1 - SMOOTHING) * seen.mean_done
        seen.mean_dt = SMOOTHING * dt + (1 - SMOOTHING) * seen.mean_dt
        seen.done, seen.at = done, now
        self._seen.move_to_end(job_id)
        return seen.mean_done / seen.mean_dt if seen.mean_dt else average

    def _remember(self, job_id: str, seen: _Seen) -> None:
        self._seen[job_id] = seen
        if len(self._seen) > MAX_JOBS:
            self._seen.popitem(last=False)
