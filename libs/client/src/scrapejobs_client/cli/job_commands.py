"""The CLI's job commands: submit, scrape, status, ls, results, cancel, retry, delete."""

from __future__ import annotations

import itertools
import sys
from contextlib import nullcontext
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TextIO

import typer
from rich.console import Console

from scrapejobs_client.cli import render
from scrapejobs_client.cli.arguments import JobId, JsonFlag
from scrapejobs_client.cli.inputs import parse_labels, read_list, read_mapping, read_urls
from scrapejobs_client.cli.results_output import (
    CsvWriter,
    JsonLinesWriter,
    ResultsWriter,
    TableWriter,
)
from scrapejobs_client.cli.state import (
    CliState,
    ExitCode,
    report_error,
    reports_errors,
    use,
)
from scrapejobs_client.cli.waiting import follow
from scrapejobs_client.errors import ScrapeTimedOut
from scrapejobs_client.models import Job
from scrapejobs_client.request_bodies import webhook_body, with_options

MAX_JOB_PAGE = 100


FILE_WIDTH = 1000  # a table written to a file is not wrapped to a terminal


class Priority(StrEnum):
    high = "high"
    normal = "normal"
    low = "low"


class ResultFormat(StrEnum):
    table = "table"
    jsonl = "jsonl"
    csv = "csv"


class PageFormat(StrEnum):
    """What ``options.formats`` accepts by name (the service's format registry)."""

    markdown = "markdown"
    text = "text"
    links = "links"
    images = "images"
    metadata = "metadata"
    html = "html"
    clean_html = "clean_html"
    summary = "summary"
    pages = "pages"
    screenshot = "screenshot"
    actions = "actions"


class RetryStatus(StrEnum):
    dead_lettered = "dead_lettered"
    failed = "failed"


class JobStatus(StrEnum):
    queued = "queued"
    running = "running"
    completed = "completed"
    cancelled = "cancelled"


ExtractFile = Annotated[
    Path | None,
    typer.Option(
        "--extract", "-e", help="Extraction spec: a JSON or YAML file.", show_default=False
    ),
]


OptionsFile = Annotated[
    Path | None,
    typer.Option(help="Job options (timeout_s, formats…): JSON or YAML.", show_default=False),
]


RenderFlag = Annotated[
    bool, typer.Option("--render", help="Render the pages in headless Chromium first.")
]


RenderAutoFlag = Annotated[
    bool,
    typer.Option(
        "--render-auto",
        help="Render only the pages that show nothing fetched plainly (app shells built by "
        "scripts).",
    ),
]


WaitFor = Annotated[
    str | None,
    typer.Option(
        help="--render: wait until an element matches this CSS selector.", show_default=False
    ),
]


WaitMs = Annotated[
    int | None,
    typer.Option(help="--render: wait this many milliseconds after load.", show_default=False),
]


ScreenshotFlag = Annotated[
    bool,
    typer.Option(
        "--screenshot",
        help="Also take a screenshot of each page (renders them; its URL in the result).",
    ),
]


ActionsFile = Annotated[
    Path | None,
    typer.Option(
        "--actions",
        help="Browser actions run on each page before it is read, a JSON or YAML list "
        '([{"type": "click", "selector": "#more"}, ...]; renders the pages).',
        show_default=False,
    ),
]


PageFormats = Annotated[
    list[PageFormat] | None,
    typer.Option(
        "--format",
        help="Also return this of each page (repeatable): markdown (the main content), text, "
        "links, images, metadata, html, clean_html, summary (needs the deployment's AI "
        "provider), pages (a document's), screenshot or actions.",
        show_default=False,
    ),
]
Attributes = Annotated[
    list[str] | None,
    typer.Option(
        "--attribute",
        help="Also return the values of an attribute on the elements a CSS selector matches: "
        "SELECTOR@ATTRIBUTE, e.g. 'a.story@href' (repeatable; the attributes format).",
        show_default=False,
    ),
]


def page_formats(
    named: list[PageFormat] | None, attributes: list[str] | None
) -> list[str | dict[str, Any]] | None:
    """options.formats from --format and --attribute (None: neither given)."""
    if not named and not attributes:
        return None
    formats: list[str | dict[str, Any]] = [f.value for f in named or []]
    if attributes:
        selectors = []
        for given in attributes:
            selector, at, attribute = given.rpartition("@")
            if not at or not selector.strip() or not attribute.strip():
                raise typer.BadParameter(
                    f"{given!r}: give SELECTOR@ATTRIBUTE", param_hint="--attribute"
                )
            selectors.append({"selector": selector.strip(), "attribute": attribute.strip()})
        formats.append({"type": "attributes", "selectors": selectors})
    return formats


def _render_option(
    rendered: bool,
    auto: bool,
    wait_for: str | None,
    wait_ms: int | None,
    actions: Path | None = None,
) -> Any:
    """options.render from the flags: None when not rendering (--wait-for, --wait-ms and
    --actions imply --render; with --render-auto they apply to the pages rendered)."""
    if wait_for is None and wait_ms is None and actions is None:
        return "auto" if auto else True if rendered else None
    waits: dict[str, Any] = {"wait_for": wait_for, "wait_ms": wait_ms}
    waits["when"] = "auto" if auto else None
    if actions is not None:
        waits["actions"] = read_list(actions, "--actions")
    return {k: v for k, v in waits.items() if v is not None}


def _with_screenshot(
    formats: list[str | dict[str, Any]] | None, screenshot: bool
) -> list[str | dict[str, Any]] | None:
    if not screenshot:
        return formats
    return [*(formats or []), "screenshot"]


@reports_errors
def submit(
    ctx: typer.Context,
    urls: Annotated[
        list[str] | None,
        typer.Argument(help="URLs to scrape; '-' reads them from stdin.", show_default=False),
    ] = None,
    file: Annotated[
        str | None,
        typer.Option(
            "--file", "-f", help="A file of URLs, one a line ('-': stdin).", show_default=False
        ),
    ] = None,
    crawl: Annotated[
        str | None,
        typer.Option(help="Crawl from this start URL instead of a URL list.", show_default=False),
    ] = None,
    max_pages: Annotated[int | None, typer.Option(help="Crawl: pages at most.")] = None,
    max_depth: Annotated[int | None, typer.Option(help="Crawl: link hops at most.")] = None,
    extract: ExtractFile = None,
    options: OptionsFile = None,
    rendered: RenderFlag = False,
    auto: RenderAutoFlag = False,
    wait_for: WaitFor = None,
    wait_ms: WaitMs = None,
    page_format: PageFormats = None,
    attribute: Attributes = None,
    screenshot: ScreenshotFlag = False,
    actions: ActionsFile = None,
    label: Annotated[
        list[str] | None, typer.Option(help="A label key=value (repeatable).", show_default=False)
    ] = None,
    priority: Annotated[Priority | None, typer.Option(show_default=False)] = None,
    webhook: Annotated[
        str | None, typer.Option(help="POST the job's events to this URL.", show_default=False)
    ] = None,
    idempotency_key: Annotated[
        str | None, typer.Option(help="Make the submission safe to repeat.", show_default=False)
    ] = None,
    wait: Annotated[
        bool, typer.Option(help="Show progress until the job ends; exit 3 if tasks failed.")
    ] = False,
    interval: Annotated[float, typer.Option(help="--wait: seconds between polls.")] = 1.0,
    wait_timeout: Annotated[
        float | None, typer.Option(help="--wait: give up after seconds (exit 6).")
    ] = None,
    json_output: JsonFlag = False,
) -> None:
    """Submit a job: URLs from arguments, --file, or stdin ('-'); or --crawl START_URL."""
    state = use(ctx, json_output)
    body = _submission(urls or [], file, crawl, max_pages, max_depth)
    if extract is not None:
        body["extract"] = read_mapping(extract, "--extract")
    if options is not None:
        body["options"] = read_mapping(options, "--options")
    merged = with_options(
        body.get("options"),
        _render_option(rendered, auto, wait_for, wait_ms, actions),
        _with_screenshot(page_formats(page_format, attribute), screenshot),
    )
    if merged is not None:
        body["options"] = merged
    if label:
        body["labels"] = parse_labels(label)
    if priority is not None:
        body["priority"] = priority.value
    if webhook is not None:
        body["webhook"] = webhook_body(webhook)
    job = state.client.submit_body(body, idempotency_key=idempotency_key)
    state.answer(
        job.model_dump(mode="json"), f"submitted job [bold]{job.id}[/] ({job.total} tasks)"
    )
    if wait:
        _wait_and_report(state, job, interval, wait_timeout)


@reports_errors
def scrape(
    ctx: typer.Context,
    url: Annotated[str, typer.Argument(help="The URL to scrape.", show_default=False)],
    extract: ExtractFile = None,
    options: OptionsFile = None,
    rendered: RenderFlag = False,
    auto: RenderAutoFlag = False,
    wait_for: WaitFor = None,
    wait_ms: WaitMs = None,
    page_format: PageFormats = None,
    attribute: Attributes = None,
    screenshot: ScreenshotFlag = False,
    actions: ActionsFile = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout", help="Wait at most this long (the service's default: 30 s); exit 6."
        ),
    ] = None,
    json_output: JsonFlag = False,
) -> None:
    """Scrape one URL and print its result (a one-URL job, answered in the request). Exit 3
    when the page did not succeed, 6 when no result came in time (the job goes on)."""
    state = use(ctx, json_output)
    try:
        scraped = state.client.scrape(
            url,
            extract=read_mapping(extract, "--extract") if extract is not None else None,
            options=read_mapping(options, "--options") if options is not None else None,
            timeout_s=timeout,
            render=_render_option(rendered, auto, wait_for, wait_ms, actions),
            formats=_with_screenshot(page_formats(page_format, attribute), screenshot),
        )
    except ScrapeTimedOut as exc:
        report_error(state, exc)
        raise typer.Exit(ExitCode.WAIT_TIMEOUT) from None
    if json_output:
        state.emit_json(scraped.model_dump(mode="json"))
    elif scraped.result is not None:
        TableWriter(state.out).write_page([scraped.result])
    else:
        state.out.print(f"job {scraped.job_id} ended {scraped.status} before the page was fetched")
    if scraped.result is None or scraped.result.status != "succeeded":
        raise typer.Exit(ExitCode.JOB_UNSUCCESSFUL)


def _submission(
    urls: list[str],
    file: str | None,
    crawl: str | None,
    max_pages: int | None,
    max_depth: int | None,
) -> dict[str, Any]:
    if crawl is not None:
        if urls or file:
            raise typer.BadParameter("give URLs or --crawl, not both", param_hint="--crawl")
        spec: dict[str, Any] = {"start_url": crawl, "max_pages": max_pages, "max_depth": max_depth}
        return {"crawl": {k: v for k, v in spec.items() if v is not None}}
    found = read_urls(urls, file)
    if not found:
        raise typer.BadParameter("no URLs: give them as arguments, --file, or '-' for stdin")
    return {"urls": found}


@reports_errors
def status(
    ctx: typer.Context,
    job_id: JobId,
    wait: Annotated[bool, typer.Option(help="Show progress until the job ends.")] = False,
    interval: Annotated[float, typer.Option(help="--wait: seconds between polls.")] = 1.0,
    wait_timeout: Annotated[float | None, typer.Option(help="--wait: give up after s.")] = None,
    json_output: JsonFlag = False,
) -> None:
    """A job's status, counts and progress (rate, ETA)."""
    state = use(ctx, json_output)
    job = state.client.get_job(job_id)
    if wait:
        _wait_and_report(state, job, interval, wait_timeout)
    elif json_output:
        state.emit_json(job.model_dump(mode="json"))
    else:
        state.out.print(render.job_table(job))


def _wait_and_report(state: CliState, job: Job, interval_s: float, timeout_s: float | None) -> None:
    try:
        final = follow(state.client, job, state.err, interval_s, timeout_s)
    except TimeoutError as exc:
        state.err.print(f"{exc}; it keeps running (scrapejobs status {job.id})")
        raise typer.Exit(ExitCode.WAIT_TIMEOUT) from None
    except KeyboardInterrupt:
        state.err.print(f"stopped waiting; job {job.id} keeps running")
        raise typer.Exit(ExitCode.INTERRUPTED) from None
    if state.json_output:
        state.emit_json(final.model_dump(mode="json"))
    else:
        state.out.print(render.job_table(final))
    if final.unsuccessful or final.status == "cancelled":
        raise typer.Exit(ExitCode.JOB_UNSUCCESSFUL)


@reports_errors
def list_jobs(
    ctx: typer.Context,
    status: Annotated[JobStatus | None, typer.Option(help="Only jobs in this status.")] = None,
    limit: Annotated[int, typer.Option(min=1, help="Jobs at most.")] = 20,
    page_token: Annotated[
        str | None, typer.Option(help="Continue a listing (printed at its end).")
    ] = None,
    json_output: JsonFlag = False,
) -> None:
    """Jobs, newest first."""
    state = use(ctx, json_output)
    jobs: list[Any] = []
    token = page_token
    while len(jobs) < limit:
        size = min(MAX_JOB_PAGE, limit - len(jobs))
        page = state.client.list_jobs(status.value if status else None, size, token)
        jobs.extend(page.jobs)
        token = page.next_page_token
        if not token:
            break
    if json_output:
        state.emit_json(
            {"jobs": [j.model_dump(mode="json") for j in jobs], "next_page_token": token}
        )
        return
    state.out.print(render.jobs_table(jobs))
    if token:
        state.err.print(f"more: scrapejobs ls --page-token {token}")


@reports_errors
def results(
    ctx: typer.Context,
    job_id: JobId,
    format: Annotated[ResultFormat, typer.Option("--format", "-F")] = ResultFormat.table,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file.", show_default=False)
    ] = None,
    page_size: Annotated[int, typer.Option(min=1, max=1000)] = 100,
    json_output: Annotated[bool, typer.Option("--json", help="Same as --format jsonl.")] = False,
) -> None:
    """A job's results, written page by page as they are fetched."""
    state = use(ctx, json_output)
    if json_output:
        format = ResultFormat.jsonl
    pages = state.client.result_pages(job_id, page_size)
    first = next(pages)  # an unknown job fails here, before any file is created
    count = 0
    with output.open("w", encoding="utf-8", newline="") if output else nullcontext(None) as file:
        writer = _results_writer(format, file, state.out)
        for page in itertools.chain([first], pages):
            writer.write_page(page.results)
            count += len(page.results)
    if output is not None:
        state.err.print(f"wrote {count} results to {output}")


def _results_writer(format: ResultFormat, file: TextIO | None, console: Console) -> ResultsWriter:
    if format is ResultFormat.table:
        return TableWriter(Console(file=file, width=FILE_WIDTH) if file else console)
    stream = file or sys.stdout
    return JsonLinesWriter(stream) if format is ResultFormat.jsonl else CsvWriter(stream)


@reports_errors
def cancel(ctx: typer.Context, job_id: JobId, json_output: JsonFlag = False) -> None:
    """Cancel a job: its unstarted tasks are never fetched."""
    state = use(ctx, json_output)
    job = state.client.cancel(job_id)
    if json_output:
        state.emit_json(job.model_dump(mode="json"))
    else:
        state.out.print(
            f"job {job.id}: {job.status} (", render.counts_text(job.counts), ")", sep=""
        )


@reports_errors
def retry(
    ctx: typer.Context,
    job_id: JobId,
    status: Annotated[
        RetryStatus, typer.Option(help="Which finished tasks to run again.")
    ] = RetryStatus.dead_lettered,
    json_output: JsonFlag = False,
) -> None:
    """Run a job's dead-lettered (or failed) tasks again."""
    state = use(ctx, json_output)
    replayed = state.client.retry(job_id, status.value)
    state.answer(
        replayed.model_dump(mode="json"),
        f"job {job_id}: {replayed.replayed} {status.value} task(s) queued again",
    )


@reports_errors
def delete(ctx: typer.Context, job_id: JobId, json_output: JsonFlag = False) -> None:
    """Delete a finished job and all its results."""
    state = use(ctx, json_output)
    state.client.delete_job(job_id)
    state.answer({"deleted": job_id}, f"job {job_id} deleted")
