"""Turn a fetched 2xx response into a task outcome: extract, run the job's pipeline, then fit
under the size limit.

A pipeline stage that refuses the data (a ``validate`` schema, a failed ``transform`` cast)
fails the task permanently: ``failed`` with error ``validation: pipeline[i] (stage): ...``,
the problems in ``field_errors`` (keyed by JSON path, after any extraction errors) and the data
as that stage received it. A crawl still follows the page's links: the page was fetched and
read; only its data was refused."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import JsonValue

from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import TaskOutcome
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.extraction import UnsupportedContent, extract_page, fit_result
from scrapejobs_shared.extraction.spec import Format
from scrapejobs_shared.pipeline import PipelineFailure, run_pipeline
from scrapejobs_worker.fetch_port import FetchResponse

BODY_TRUNCATED = "$body"  # in truncated_fields: the page exceeded the fetch byte cap


@dataclass(frozen=True, slots=True)
class ExtractedPage:
    outcome: TaskOutcome
    links: tuple[str, ...] = ()  # absolute, normalised; collected for crawl jobs


def extract_outcome(response: FetchResponse, spec: JobSpec) -> ExtractedPage:
    formats: list[Format] = list(spec.options.formats)
    crawling = spec.crawl is not None
    if crawling and "links" not in formats:
        formats.append("links")
    try:
        page = extract_page(
            response.body,
            content_type=response.content_type,
            url=response.url,
            fields=spec.extract,
            formats=formats,
        )
    except UnsupportedContent as exc:
        outcome = TaskOutcome(
            TaskStatus.FAILED,
            http_status=response.status,
            error=f"unsupported_content: {exc.reason}",
            elapsed_ms=response.elapsed_ms,
        )
        return ExtractedPage(outcome)
    data = dict(page.data)
    links = _links(data, keep="links" in spec.options.formats) if crawling else ()
    status, errors, error = TaskStatus.SUCCEEDED, dict(page.errors), None
    try:
        data = run_pipeline(spec.pipeline, data)
    except PipelineFailure as failure:
        status, data, error = TaskStatus.FAILED, failure.data, failure.error
        errors.update(failure.problems)
    fitted, truncated = fit_result(data)
    if response.truncated:
        truncated.insert(0, BODY_TRUNCATED)
    outcome = TaskOutcome(
        status,
        http_status=response.status,
        data=fitted,
        error=error,
        elapsed_ms=response.elapsed_ms,
        truncated_fields=tuple(truncated),
        field_errors=errors or None,
        rendered_ms=response.rendered_ms,
    )
    return ExtractedPage(outcome, links)


def _links(data: dict[str, JsonValue], keep: bool) -> tuple[str, ...]:
    found = data.get("links") if keep else data.pop("links", None)
    return tuple(link for link in found if isinstance(link, str)) if isinstance(found, list) else ()
