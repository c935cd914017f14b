"""Turn a fetched 2xx response into a task outcome: extract, then fit under the size limit."""

from __future__ import annotations

from scrapejobs_shared.extraction import UnsupportedContent, extract_page, fit_result
from scrapejobs_shared.jobspec import JobSpec
from scrapejobs_shared.records import TaskOutcome
from scrapejobs_shared.statuses import TaskStatus
from scrapejobs_worker.fetch_port import FetchResponse

BODY_TRUNCATED = "$body"  # in truncated_fields: the page exceeded the fetch byte cap


def extract_outcome(response: FetchResponse, spec: JobSpec) -> TaskOutcome:
    try:
        page = extract_page(
            response.body,
            content_type=response.content_type,
            url=response.url,
            fields=spec.extract,
            formats=spec.options.formats,
        )
    except UnsupportedContent as exc:
        return TaskOutcome(
            TaskStatus.FAILED,
            http_status=response.status,
            error=f"unsupported_content: {exc.reason}",
            elapsed_ms=response.elapsed_ms,
        )
    data, truncated = fit_result(page.data)
    if response.truncated:
        truncated.insert(0, BODY_TRUNCATED)
    return TaskOutcome(
        TaskStatus.SUCCEEDED,
        http_status=response.status,
        data=data,
        elapsed_ms=response.elapsed_ms,
        truncated_fields=tuple(truncated),
        field_errors=page.errors or None,
    )
