"""``scrapejobs``: the command line for the scrapejobs API (on ``scrapejobs_client.Client``).

Every command takes ``--json`` (machine-readable output on stdout); errors go to stderr with
the API's own message; exit codes are ``ExitCode`` (see docs/operations.md, "CLI").
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TextIO

import typer
from rich.console import Console

from scrapejobs_client.cli import render
from scrapejobs_client.cli.inputs import parse_labels, read_mapping, read_urls
from scrapejobs_client.cli.results_output import (
    CsvWriter,
    JsonLinesWriter,
    ResultsWriter,
    TableWriter,
)
from scrapejobs_client.cli.state import (
    CliConfig,
    CliState,
    ExitCode,
    report_error,
    reports_errors,
    state_of,
    use,
)
from scrapejobs_client.cli.waiting import follow
from scrapejobs_client.client import DEFAULT_API_URL, with_options
from scrapejobs_client.errors import NotFound, ScrapeTimedOut
from scrapejobs_client.models import Job, Webhook

app = typer.Typer(
    help="Submit scraping jobs to a scrapejobs API and inspect them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
dead_letters_app = typer.Typer(
    help="Tasks that failed after all their delivery attempts.", no_args_is_help=True
)
app.add_typer(dead_letters_app, name="dead-letters")

JsonFlag = Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")]
JobId = Annotated[str, typer.Argument(help="The job's id.", show_default=False)]
MAX_JOB_PAGE = 100
MAX_DEAD_LETTER_PAGE = 500
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
    """What ``options.formats`` accepts (the service's ``Format``)."""

    markdown = "markdown"
    text = "text"
    links = "links"
    images = "images"
    metadata = "metadata"
    html = "html"
    clean_html = "clean_html"


class RetryStatus(StrEnum):
    dead_lettered = "dead_lettered"
    failed = "failed"


class Window(StrEnum):
    m5 = "5m"
    h1 = "1h"
    h24 = "24h"


class JobStatus(StrEnum):
    queued = "queued"
    running = "running"
    completed = "completed"
    cancelled = "cancelled"


@app.callback()
def configure(
    ctx: typer.Context,
    api: Annotated[
        str, typer.Option("--api", envvar="SCRAPEJOBS_API", help="The API's base URL.")
    ] = DEFAULT_API_URL,
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key", envvar="SCRAPEJOBS_API_KEY", help="Sent as X-API-Key.", show_default=False
        ),
    ] = None,
    iam: Annotated[
        bool,
        typer.Option(
            "--iam",
            envvar="SCRAPEJOBS_IAM",
            help="Send a Google ID token (Cloud Run IAM) from the ambient Google credentials.",
        ),
    ] = False,
    audience: Annotated[
        str | None,
        typer.Option(help="The ID token's audience (default: --api).", show_default=False),
    ] = None,
    timeout: Annotated[float, typer.Option(help="Seconds per HTTP request.")] = 30.0,
    attempts: Annotated[
        int,
        typer.Option(min=1, help="Tries per request (429, 503 and connection errors are retried)."),
    ] = 5,
) -> None:
    state = ctx.obj if isinstance(ctx.obj, CliState) else CliState()
    use_iam = iam or audience is not None
    state.config = CliConfig(api, api_key, use_iam, audience, timeout, attempts)
    ctx.obj = state
    ctx.call_on_close(state.close)


# --- jobs -------------------------------------------------------------------------------------

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
PageFormats = Annotated[
    list[PageFormat] | None,
    typer.Option(
        "--format",
        help="Also return this of each page (repeatable): markdown (the main content), text, "
        "links, images, metadata or html.",
        show_default=False,
    ),
]


def _render_option(rendered: bool, wait_for: str | None, wait_ms: int | None) -> Any:
    """options.render from the flags: None when not rendering (--wait-for/--wait-ms imply it)."""
    if wait_for is None and wait_ms is None:
        return True if rendered else None
    waits = {"wait_for": wait_for, "wait_ms": wait_ms}
    return {k: v for k, v in waits.items() if v is not None}


@app.command()
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
    wait_for: WaitFor = None,
    wait_ms: WaitMs = None,
    page_format: PageFormats = None,
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
    if (rendering := _render_option(rendered, wait_for, wait_ms)) is not None:
        body["options"] = with_options(body.get("options"), rendering)
    if page_format:
        formats = [f.value for f in page_format]
        body["options"] = with_options(body.get("options"), formats=formats)
    if label:
        body["labels"] = parse_labels(label)
    if priority is not None:
        body["priority"] = priority.value
    if webhook is not None:
        body["webhook"] = Webhook(url=webhook).model_dump(exclude_none=True)
    job = state.client.submit_body(body, idempotency_key=idempotency_key)
    if json_output:
        state.emit_json(job.model_dump(mode="json"))
    else:
        state.out.print(f"submitted job [bold]{job.id}[/] ({job.total} tasks)")
    if wait:
        _wait_and_report(state, job, interval, wait_timeout)


@app.command()
@reports_errors
def scrape(
    ctx: typer.Context,
    url: Annotated[str, typer.Argument(help="The URL to scrape.", show_default=False)],
    extract: ExtractFile = None,
    options: OptionsFile = None,
    rendered: RenderFlag = False,
    wait_for: WaitFor = None,
    wait_ms: WaitMs = None,
    page_format: PageFormats = None,
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
            render=_render_option(rendered, wait_for, wait_ms),
            formats=[f.value for f in page_format] if page_format else None,
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


@app.command()
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


@app.command("ls")
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


@app.command()
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


@app.command()
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


@app.command()
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
    if json_output:
        state.emit_json(replayed.model_dump(mode="json"))
    else:
        state.out.print(f"job {job_id}: {replayed.replayed} {status.value} task(s) queued again")


@app.command()
@reports_errors
def delete(ctx: typer.Context, job_id: JobId, json_output: JsonFlag = False) -> None:
    """Delete a finished job and all its results."""
    state = use(ctx, json_output)
    state.client.delete_job(job_id)
    if json_output:
        state.emit_json({"deleted": job_id})
    else:
        state.out.print(f"job {job_id} deleted")


# --- dead letters -----------------------------------------------------------------------------


@dead_letters_app.command("ls")
@reports_errors
def dead_letters_ls(
    ctx: typer.Context,
    job: Annotated[str | None, typer.Option("--job", help="Of this job.")] = None,
    host: Annotated[str | None, typer.Option(help="Of this host: a URL or a host key.")] = None,
    limit: Annotated[int, typer.Option(min=1, help="Dead letters at most.")] = 50,
    json_output: JsonFlag = False,
) -> None:
    """Dead-lettered tasks, newest first, with their last error."""
    state = use(ctx, json_output)
    letters: list[Any] = []
    token: str | None = None
    while len(letters) < limit:
        size = min(MAX_DEAD_LETTER_PAGE, limit - len(letters))
        page = state.client.dead_letters_page(job, host, size, token)
        letters.extend(page.dead_letters)
        token = page.next_page_token
        if not token:
            break
    if json_output:
        state.emit_json(
            {"dead_letters": [d.model_dump(mode="json") for d in letters], "more": bool(token)}
        )
        return
    state.out.print(render.dead_letters_table(letters))
    if token:
        state.err.print(f"more than {limit}: raise --limit")


@dead_letters_app.command("replay")
@reports_errors
def dead_letters_replay(
    ctx: typer.Context,
    job: Annotated[str | None, typer.Option("--job", help="Of this job.")] = None,
    host: Annotated[str | None, typer.Option(help="Of this host: a URL or a host key.")] = None,
    limit: Annotated[int | None, typer.Option(min=1, max=500, help="At most (500).")] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Replay every dead letter without asking.")
    ] = False,
    json_output: JsonFlag = False,
) -> None:
    """Put dead letters back to queued with fresh attempts (of a job, of a host, or all)."""
    state = use(ctx, json_output)
    if job is None and host is None and not yes:
        typer.confirm("Replay every dead letter (up to 500)?", abort=True, err=True)
    replayed = state.client.replay_dead_letters(job, host, limit)
    if json_output:
        state.emit_json(replayed.model_dump(mode="json"))
    else:
        state.out.print(f"{replayed.replayed} dead letter(s) queued again")


# --- hosts and monitoring ---------------------------------------------------------------------


@app.command()
@reports_errors
def hosts(
    ctx: typer.Context,
    url: Annotated[str, typer.Argument(help="Any URL on the host.", show_default=False)],
    json_output: JsonFlag = False,
) -> None:
    """A host's politeness state: paused (breaker, Retry-After), slots held."""
    state = use(ctx, json_output)
    host = state.client.hosts(url)
    if json_output:
        state.emit_json(host.model_dump(mode="json"))
    else:
        state.out.print(render.host_table(host))


@app.command()
@reports_errors
def workers(ctx: typer.Context, json_output: JsonFlag = False) -> None:
    """Worker processes heard from in the last 5 minutes: what each finished, what it runs."""
    state = use(ctx, json_output)
    listed = state.client.workers()
    if json_output:
        state.emit_json({"workers": [w.model_dump(mode="json") for w in listed]})
    elif listed:
        state.out.print(render.workers_table(listed))
    else:
        state.out.print("no worker heard from in the last 5 minutes")


@app.command()
@reports_errors
def stats(
    ctx: typer.Context,
    window: Annotated[Window, typer.Option(help="The window of the figures.")] = Window.m5,
    history: Annotated[
        int | None,
        typer.Option(help="Also the hourly history of the last N hours.", show_default=False),
    ] = None,
    json_output: JsonFlag = False,
) -> None:
    """Throughput, latency, error rate, backlog and paused hosts."""
    state = use(ctx, json_output)
    with _missing_on_older_servers("GET /v1/stats"):
        figures = state.client.stats(window.value)
        hourly = state.client.stats_history(history) if history is not None else None
    if json_output:
        value = figures.model_dump(mode="json")
        if hourly is not None:
            value["history"] = hourly.model_dump(mode="json")["history"]
        state.emit_json(value)
        return
    for table in render.stats_tables(figures):
        state.out.print(table)
    if hourly is not None:
        state.out.print(render.history_table(hourly))


@app.command()
@reports_errors
def health(ctx: typer.Context, json_output: JsonFlag = False) -> None:
    """The service's health with its reasons; exit 4 when DEGRADED, 5 when UNHEALTHY."""
    state = use(ctx, json_output)
    with _missing_on_older_servers("GET /v1/health"):
        report = state.client.health()
    if json_output:
        state.emit_json(report.model_dump(mode="json"))
    else:
        for table in render.health_tables(report):
            state.out.print(table)
    if report.status == "DEGRADED":
        raise typer.Exit(ExitCode.DEGRADED)
    if report.status != "HEALTHY":
        raise typer.Exit(ExitCode.UNHEALTHY)


@contextmanager
def _missing_on_older_servers(endpoint: str) -> Iterator[None]:
    """A 404 from a server that predates the endpoint says so, not just "Not Found"."""
    try:
        yield
    except NotFound as exc:
        if exc.message != "Not Found":  # Starlette's own: no such route
            raise
        exc.message = f"{exc.message}: this API has no {endpoint} (an older server?)"
        raise


def main() -> None:
    """Console script entry point."""
    app(prog_name="scrapejobs")


__all__ = ["app", "main", "state_of"]
