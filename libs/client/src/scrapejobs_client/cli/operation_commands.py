"""The CLI's operation commands: dead letters (ls, replay), hosts, workers, stats, health."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import Annotated, Any

import typer

from scrapejobs_client.cli import render
from scrapejobs_client.cli.arguments import JsonFlag
from scrapejobs_client.cli.state import (
    ExitCode,
    reports_errors,
    use,
)
from scrapejobs_client.errors import NotFound

MAX_DEAD_LETTER_PAGE = 500


class Window(StrEnum):
    m5 = "5m"
    h1 = "1h"
    h24 = "24h"


@reports_errors
def dead_letters_ls(
    ctx: typer.Context,
    job: Annotated[str | None, typer.Option("--job", help="Of this job.")] = None,
    host: Annotated[str | None, typer.Option(help="Of this host: a URL or a host key.")] = None,
    tenant: Annotated[str | None, typer.Option(help="Of this tenant (admin keys).")] = None,
    limit: Annotated[int, typer.Option(min=1, help="Dead letters at most.")] = 50,
    json_output: JsonFlag = False,
) -> None:
    """Dead-lettered tasks, newest first, with their last error."""
    state = use(ctx, json_output)
    letters: list[Any] = []
    token: str | None = None
    while len(letters) < limit:
        size = min(MAX_DEAD_LETTER_PAGE, limit - len(letters))
        page = state.client.dead_letters_page(job, host, size, token, tenant)
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


@reports_errors
def dead_letters_replay(
    ctx: typer.Context,
    job: Annotated[str | None, typer.Option("--job", help="Of this job.")] = None,
    host: Annotated[str | None, typer.Option(help="Of this host: a URL or a host key.")] = None,
    tenant: Annotated[str | None, typer.Option(help="Of this tenant (admin keys).")] = None,
    limit: Annotated[int | None, typer.Option(min=1, max=500, help="At most (500).")] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Replay every dead letter without asking.")
    ] = False,
    json_output: JsonFlag = False,
) -> None:
    """Put dead letters back to queued with fresh attempts (of a job, of a host, or all)."""
    state = use(ctx, json_output)
    if job is None and host is None and tenant is None and not yes:
        typer.confirm("Replay every dead letter (up to 500)?", abort=True, err=True)
    replayed = state.client.replay_dead_letters(job, host, limit, tenant)
    state.answer(
        replayed.model_dump(mode="json"), f"{replayed.replayed} dead letter(s) queued again"
    )


@reports_errors
def hosts(
    ctx: typer.Context,
    url: Annotated[str, typer.Argument(help="Any URL on the host.", show_default=False)],
    json_output: JsonFlag = False,
) -> None:
    """A host's politeness state: paused (breaker, Retry-After), slots held."""
    state = use(ctx, json_output)
    host = state.client.hosts(url)
    state.answer(host.model_dump(mode="json"), render.host_table(host))


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
