"""Turn a fetched 2xx response (or an uploaded file) into a task outcome: extract, run the
job's pipeline, then fit under the size limit. The worker's extraction processes run it on
each page, the dispatcher's parsing processes on each upload. A pipeline with an ``ai`` stage
runs here up to it: the page is handed to the processing lane with the model's input (its
markdown, text or data), cut to the stage's ``max_input_chars`` (one character more, so the
stage knows it was cut).

A pipeline stage that refuses the data (a ``validate`` schema, a failed ``transform`` cast)
fails the task permanently: ``failed`` with error ``validation: pipeline[i] (stage): ...``,
the problems in ``field_errors`` (keyed by JSON path, after any extraction errors) and the data
as that stage received it. A crawl still follows the page's links: the page was fetched and
read; only its data was refused.

A page whose extraction uses more CPU than the worker's budget (``SCRAPEJOBS_EXTRACTION_
BUDGET_S``; a catastrophic XPath, a page built to be slow to parse) fails permanently,
``extraction_timeout``: trying it again would take as long.

A page that shows nothing (an app shell: no visible text, image or frame) and gave none of
the job's fields a value fails ``empty_content``: it holds nothing the job asked for."""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import JsonValue

from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.metered import Metered
from scrapejobs_shared.domain.records import TaskOutcome
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.extraction import ContentKind, UnsupportedContent, extract_page, fit_result
from scrapejobs_shared.extraction.documents.ocr import OcrLimits
from scrapejobs_shared.extraction.formats import FormatChoice
from scrapejobs_shared.extraction.unusable_pages import Unusable
from scrapejobs_shared.options import CONTENT, DOCUMENTS, LOCATION
from scrapejobs_shared.pipeline import PipelineFailure, run_pipeline
from scrapejobs_shared.pipeline.spec import AiOptions, ai_stage_index
from scrapejobs_shared.ports.fetcher import FetchResponse

BODY_TRUNCATED = "$body"  # in truncated_fields: the page exceeded the fetch byte cap


DEFAULT_OCR_LIMITS = OcrLimits()
HANDOFF_BYTES = 1_000_000  # the handoff document (result so far and input) under Firestore's 1 MiB


@dataclass(frozen=True, slots=True)
class ExtractedPage:
    outcome: TaskOutcome
    links: tuple[str, ...] = ()  # absolute, normalised; collected for crawl jobs
    model_input: str | None = None  # set when the page goes on to the processing lane


def extract_outcome(
    response: FetchResponse, spec: JobSpec, ocr_limits: OcrLimits = DEFAULT_OCR_LIMITS
) -> ExtractedPage:
    """``response`` read as ``spec`` asks; ``ocr_limits``: the deployment's bounds on OCR
    (its settings: config/settings.py)."""
    formats: list[FormatChoice] = list(spec.options.formats)
    crawling = spec.crawl is not None
    if crawling and "links" not in formats:
        formats.append("links")
    ai_index = ai_stage_index(spec.pipeline)
    ai = spec.pipeline[ai_index].options if ai_index is not None else None
    wanted = ai.input if isinstance(ai, AiOptions) and ai.input != "data" else None
    if wanted is not None and wanted not in formats:
        formats.append(wanted)  # the model's input, not kept in the data unless asked for
    try:
        page = extract_page(
            response.body,
            content_type=response.content_type,
            url=response.url,
            fields=spec.extract,
            formats=formats,
            content=CONTENT.of(spec.options).scope(),
            documents=DOCUMENTS.of(spec.options).reading(ocr_limits, _asked_in(spec)),
            browser=response.browser,
        )
    except UnsupportedContent as exc:
        # A document cut at the fetch's size cap cannot be read: say why it was cut.
        cut = " (the response was cut at the fetch size limit)" if response.truncated else ""
        outcome = TaskOutcome(
            TaskStatus.FAILED,
            http_status=response.status,
            error=f"unsupported_content: {exc.reason}{cut}",
            elapsed_ms=response.elapsed_ms,
        )
        return ExtractedPage(outcome)
    if page.empty and not _found_any_field(page.data, spec):
        outcome = TaskOutcome(
            TaskStatus.FAILED,
            http_status=response.status,
            error=_empty_error(response, page.content_kind, page.ocr_pages),
            elapsed_ms=response.elapsed_ms,
            rendered_ms=response.rendered_ms,
            tls_unverified=response.tls_unverified,
        )
        return ExtractedPage(outcome)
    data = dict(page.data)
    links = _links(data, keep="links" in spec.options.formats) if crawling else ()
    model_text: JsonValue = None
    if wanted is not None:
        model_text = data.get(wanted) if wanted in spec.options.formats else data.pop(wanted, "")
    status, errors, error = TaskStatus.SUCCEEDED, dict(page.errors), None
    try:
        data = run_pipeline(spec.pipeline[:ai_index], data)
    except PipelineFailure as failure:
        status, data, error = TaskStatus.FAILED, failure.data, failure.error
        errors.update(failure.problems)
    fitted, truncated = fit_result(data)
    model_input = None
    if isinstance(ai, AiOptions) and status is TaskStatus.SUCCEEDED:
        text = json.dumps(fitted) if ai.input == "data" else str(model_text or "")
        model_input = _fit_input(text, ai.max_input_chars, fitted)
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
        metered=Metered(
            document_pages=page.document_pages,
            ocr_pages=page.ocr_pages,
            ocr_credits=page.ocr_credits,
            screenshots=response.browser.screenshots if response.browser is not None else 0,
            proxied_basic=int(response.proxy_tier == "basic"),
            proxied_stealth=int(response.proxy_tier == "stealth"),
        ),
        tls_unverified=response.tls_unverified,
    )
    return ExtractedPage(outcome, links, model_input)


def _asked_in(spec: JobSpec) -> tuple[str, ...]:
    """The languages the job's pages are asked in (location.languages)."""
    location = LOCATION.of(spec.options)
    return tuple(location.languages) if location is not None else ()


def stopped(response: FetchResponse, error: str) -> ExtractedPage:
    """The outcome of a page whose extraction was stopped past a budget (CPU, memory)."""
    outcome = TaskOutcome(
        TaskStatus.FAILED,
        http_status=response.status,
        error=error,
        elapsed_ms=response.elapsed_ms,
        rendered_ms=response.rendered_ms,
        tls_unverified=response.tls_unverified,
    )
    return ExtractedPage(outcome)


def _found_any_field(data: dict[str, JsonValue], spec: JobSpec) -> bool:
    """Whether one of the job's fields found something (a shell's meta tags may be all a job
    asks for: that page is no failure)."""
    return any(
        data.get(name) not in (None, [], field.default) for name, field in spec.extract.items()
    )


def _empty_error(response: FetchResponse, content: ContentKind, ocr_pages: int) -> str:
    kind = Unusable.EMPTY_CONTENT.value
    if content is ContentKind.DOCUMENT and ocr_pages:
        return f"{kind}: the document has no text, and OCR found none on its pages"
    if content is ContentKind.DOCUMENT:
        return (
            f"{kind}: the document has no text (a scan, read without OCR? "
            "options.documents.ocr auto or ocr reads it; Firecrawl: parsers mode auto)"
        )
    if content is not ContentKind.HTML:
        return f"{kind}: the response's body is blank"
    if response.rendered_ms is not None:
        return f"{kind}: the page shows nothing, even rendered in a browser"
    return (
        f"{kind}: the page shows nothing (no visible text, image or frame): a page built by "
        "scripts? options.render (Firecrawl: waitFor) renders it in a browser"
    )


def _fit_input(text: str, max_chars: int, data: dict[str, JsonValue]) -> str:
    """The model's input as the handoff keeps it: at most one character past ``max_chars``
    (the stage then knows it was cut), and within what the handoff document has room for."""
    text = text[: max_chars + 1]
    room = HANDOFF_BYTES - len(json.dumps(data).encode())
    while text and len(text.encode()) > room:
        text = text[: len(text) * 3 // 4]
    return text


def _links(data: dict[str, JsonValue], keep: bool) -> tuple[str, ...]:
    found = data.get("links") if keep else data.pop("links", None)
    return tuple(link for link in found if isinstance(link, str)) if isinstance(found, list) else ()
