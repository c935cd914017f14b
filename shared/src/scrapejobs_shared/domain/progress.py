"""A job's progress and its estimated time to completion.

The rate is a sliding window, like rich's progress bars: the tasks finished over the last
``WINDOW_S`` seconds of looks at the job divided by the time those looks span. Results arrive
in bursts (a batch commits many at once), and a window of looks averages them out where an
exponential average of each look would jump. Until the looks span ``MIN_WINDOW_S``, the rate is
the average since the job started. The estimate is ``None`` until the job has run at least
``MIN_ELAPSED_S`` and finished a task, and when the rate says more than ``MAX_ETA`` (a job that
has stopped moving for now); a finished job's is 0 and its percent 100. A crawl's total grows,
and the estimate with it.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass
from datetime import datetime, timedelta

WINDOW_S = 30.0
MIN_WINDOW_S = 2.0
MIN_ELAPSED_S = 1.0
MAX_ETA = timedelta(days=365)
MAX_JOBS = 10_000


@dataclass(frozen=True, slots=True)
class Progress:
    done: int
    total: int
    percent: float
    rate_per_s: float | None
    eta_s: float | None
    estimated_completion: datetime | None


class ProgressEstimator:
    """Per process: the recent looks at each job (bounded), for its rate."""

    def __init__(self) -> None:
        self._looks: OrderedDict[str, deque[tuple[datetime, int]]] = OrderedDict()

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
            self._looks.pop(job_id, None)
            return Progress(done, total, 100.0, None, 0.0, now)
        percent = round(100.0 * done / total, 1) if total else 0.0
        rate = self._rate(job_id, done, started_at, now)
        if rate is None or rate <= 0:
            return Progress(done, total, percent, None, None, None)
        eta_s = max(total - done, 0) / rate
        if eta_s > MAX_ETA.total_seconds():
            return Progress(done, total, percent, round(rate, 6), None, None)
        completion = now + timedelta(seconds=eta_s)
        return Progress(done, total, percent, round(rate, 3), round(eta_s, 1), completion)

    def _rate(
        self, job_id: str, done: int, started_at: datetime | None, now: datetime
    ) -> float | None:
        looks = self._looks.get(job_id)
        if looks is None:
            looks = self._looks[job_id] = deque()
            if len(self._looks) > MAX_JOBS:
                self._looks.popitem(last=False)
        self._looks.move_to_end(job_id)
        looks.append((now, done))
        while len(looks) > 2 and (now - looks[1][0]).total_seconds() >= WINDOW_S:
            looks.popleft()  # keep the oldest look that still spans the window
        if started_at is None or done <= 0:
            return None
        elapsed = (now - started_at).total_seconds()
        if elapsed < MIN_ELAPSED_S:
            return None
        first_at, first_done = looks[0]
        span = (now - first_at).total_seconds()
        if span < MIN_WINDOW_S:
            return done / elapsed
        return max(done - first_done, 0) / span
