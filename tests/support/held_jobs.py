"""A job whose batches of one host are held beyond its window, for the held-batches contract
tests (the adapter's and the limits model's layout)."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from scrapejobs_shared.delivery.batching import hold_beyond, plan_batches, shards_for
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import BatchItem, BatchRecord, JobRecord, task_id_for
from scrapejobs_shared.domain.statuses import JobStatus


def job_with_held_batches(
    created: datetime, window: int = 2
) -> tuple[JobRecord, list[BatchRecord]]:
    """A job of 12 pages of one host in batches of 2 (6 batches), the first ``window``
    unheld, and 2 pages of another host (a batch of its own)."""
    job_id = uuid.uuid4().hex
    urls = [f"http://a.example/p/{i}" for i in range(12)] + [
        "http://b.example/1",
        "http://b.example/2",
    ]
    items = [BatchItem(task_id_for(job_id, str(i)), url, index=i) for i, url in enumerate(urls)]
    batches = hold_beyond(
        plan_batches(job_id, items, 2, created, created + timedelta(days=1)), window
    )
    job = JobRecord(
        job_id,
        JobStatus.QUEUED,
        JobSpec(),
        created,
        created,
        created + timedelta(days=1),
        total=len(urls),
        counter_shards=shards_for(len(batches)),
    )
    return job, batches
