"""A monitor check's conditional fetch (domain/page_validators.py), in one place: the page is
asked with the validators its last check kept (``If-None-Match``, ``If-Modified-Since``); a
``304``, or the same body again, is ``unchanged`` without being parsed; a page that changed keeps
its new validators for the next check."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.page_validators import PageValidators
from scrapejobs_shared.domain.records import BatchItem, TaskOutcome
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.ports.fetcher import FetchError, FetchResponse


def request_headers(item: BatchItem, headers: dict[str, str]) -> dict[str, str]:
    """The job's headers, with the page's validators when it has some."""
    return headers if item.validators is None else headers | item.validators.request_headers()


def unchanged_outcome(
    item: BatchItem, result: FetchResponse | FetchError, now: datetime
) -> TaskOutcome | None:
    """The outcome of a page the response says did not change (None: it changed, or was not
    asked conditionally)."""
    validators = item.validators
    if validators is None or not isinstance(result, FetchResponse):
        return None
    if not validators.unchanged(result.status, result.body):
        return None
    return TaskOutcome(
        TaskStatus.SUCCEEDED,
        http_status=result.status,
        fetched_at=now,
        elapsed_ms=result.elapsed_ms,
        unchanged=True,
    )


def with_validators(outcome: TaskOutcome, response: FetchResponse, spec: JobSpec) -> TaskOutcome:
    """A monitor check's page outcome keeping the validators of its response."""
    if not spec.conditional:
        return outcome
    validators = PageValidators.of_response(response.headers, response.body)
    return replace(outcome, validators=validators)
