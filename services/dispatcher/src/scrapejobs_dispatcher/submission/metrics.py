"""The dispatcher's metrics: jobs and tasks submitted (``scrapejobs.submitted.jobs``,
``{job}``; ``scrapejobs.submitted.tasks``, ``{task}``), by ``scrapejobs.job.kind``
(``urls`` or ``crawl``: a crawl submits its start page, the rest is counted as it is found)."""

from __future__ import annotations

from opentelemetry.metrics import Meter


class SubmissionMetrics:
    def __init__(self, meter: Meter) -> None:
        self._jobs = meter.create_counter(
            "scrapejobs.submitted.jobs", unit="{job}", description="Jobs submitted"
        )
        self._tasks = meter.create_counter(
            "scrapejobs.submitted.tasks", unit="{task}", description="Tasks submitted with jobs"
        )

    def submitted(self, tasks: int, crawl: bool) -> None:
        attributes = {"scrapejobs.job.kind": "crawl" if crawl else "urls"}
        self._jobs.add(1, attributes)
        self._tasks.add(tasks, attributes)
