"""Typed Python client for the scrapejobs REST API (and, in ``scrapejobs_client.cli``, the
``scrapejobs`` command line).

    from scrapejobs_client import Client

    with Client("http://127.0.0.1:8080") as client:
        job = client.submit(["https://example.com/"], extract={"title": {"css": "h1::text"}})
        for result in client.results(client.wait(job.id).id):
            print(result.url, result.data)
"""

from scrapejobs_client.auth import ApiKeyAuth, GoogleIdTokenAuth
from scrapejobs_client.client import DEFAULT_API_URL, Client
from scrapejobs_client.errors import (
    ApiError,
    ApiUnreachable,
    NotFound,
    ScrapejobsError,
    ScrapeTimedOut,
)
from scrapejobs_client.models import (
    DeadLetter,
    DeadLetterPage,
    Health,
    HostState,
    HourStats,
    Job,
    JobPage,
    JobProgress,
    JobSummary,
    Replayed,
    ResultPage,
    Scraped,
    Stats,
    StatsHistory,
    TaskResult,
    Webhook,
    Worker,
)
from scrapejobs_client.retries import NO_RETRIES, RetryPolicy

__all__ = [
    "DEFAULT_API_URL",
    "NO_RETRIES",
    "ApiError",
    "ApiKeyAuth",
    "ApiUnreachable",
    "Client",
    "DeadLetter",
    "DeadLetterPage",
    "GoogleIdTokenAuth",
    "Health",
    "HostState",
    "HourStats",
    "Job",
    "JobPage",
    "JobProgress",
    "JobSummary",
    "NotFound",
    "Replayed",
    "ResultPage",
    "RetryPolicy",
    "ScrapeTimedOut",
    "Scraped",
    "ScrapejobsError",
    "Stats",
    "StatsHistory",
    "TaskResult",
    "Webhook",
    "Worker",
]
