"""``--wait``: follow a job to its end with a Rich progress bar (on stderr) whose done/total,
rate and ETA are the API's own (``progress`` of ``GET /v1/jobs/{id}``), not guessed here."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
)

from scrapejobs_client.cli.render import duration, number
from scrapejobs_client.client import Client
from scrapejobs_client.models import Job


def follow(
    client: Client,
    job: Job,
    console: Console,
    interval_s: float = 1.0,
    timeout_s: float | None = None,
) -> Job:
    """Poll the job until it is finished and return it; ``TimeoutError`` after ``timeout_s``."""
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[rate]}"),
        TextColumn("ETA {task.fields[eta]}"),
        TextColumn("{task.fields[status]}"),
    )
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task(job.id, total=job.total or None, rate="-/s", eta="-", status="")
        rate = "-/s"
        for current in client.watch(job.id, interval_s, timeout_s):
            progress = current.progress
            if progress is not None and progress.rate_per_s is not None:
                rate = number(progress.rate_per_s, "/s")  # kept once the API stops giving one
            done = progress.done if progress else current.total - current.open_tasks
            total = progress.total if progress else current.total
            bar.update(
                task,
                completed=done,
                total=total or None,
                rate=rate,
                eta=duration(progress.eta_s if progress else None),
                status=current.status,
            )
            job = current
    return job
