"""The CLI's monitor commands: create, ls, show, run, pause, resume, checks, diff."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from scrapejobs_client.cli.arguments import JsonFlag
from scrapejobs_client.cli.render import status_text, when
from scrapejobs_client.cli.state import reports_errors, use
from scrapejobs_client.monitor_models import Monitor, MonitorCheck, MonitorPage

MonitorId = Annotated[str, typer.Argument(help="The monitor's id.", show_default=False)]


@reports_errors
def create(
    ctx: typer.Context,
    urls: Annotated[list[str] | None, typer.Argument(help="The pages to watch.")] = None,
    name: Annotated[str, typer.Option(help="What the monitor watches.")] = "",
    schedule: Annotated[
        str, typer.Option(help="Words ('every 30 minutes', 'daily at 9:00') or a cron line.")
    ] = "daily",
    timezone: Annotated[str, typer.Option(help="An IANA time zone.")] = "UTC",
    extract: Annotated[
        Path | None, typer.Option("--extract", "-e", help="A JSON file: field -> selector.")
    ] = None,
    body: Annotated[
        Path | None,
        typer.Option(help="A JSON file with the whole body of POST /v1/monitors instead."),
    ] = None,
    json_output: JsonFlag = False,
) -> None:
    """Watch pages on a schedule."""
    state = use(ctx, json_output)
    if body is not None:
        request: dict[str, Any] = json.loads(body.read_text())
    else:
        if not urls:
            raise typer.BadParameter("give URLs, or --body")
        kind = "cron" if len(schedule.split()) == 5 and schedule[0] in "*0123456789" else "text"
        request = {
            "urls": urls,
            "name": name or urls[0],
            "schedule": {kind: schedule, "timezone": timezone},
        }
        if extract is not None:
            request["extract"] = json.loads(extract.read_text())
    made = state.client.create_monitor(request)
    if json_output:
        state.emit_json(made.model_dump(mode="json"))
        return
    state.err.print(f"monitor {made.id}: next check {when(made.next_check_at)}")
    state.out.print(made.id, markup=False, highlight=False)


@reports_errors
def ls(ctx: typer.Context, json_output: JsonFlag = False) -> None:
    """The monitors of the key's tenant, newest first."""
    state = use(ctx, json_output)
    monitors = list(state.client.monitors())
    state.answer(
        {"monitors": [m.model_dump(mode="json") for m in monitors]}, monitors_table(monitors)
    )


@reports_errors
def show(ctx: typer.Context, monitor_id: MonitorId, json_output: JsonFlag = False) -> None:
    """A monitor: its schedule, state and last check."""
    state = use(ctx, json_output)
    monitor = state.client.get_monitor(monitor_id)
    state.answer(monitor.model_dump(mode="json"), monitors_table([monitor]))


@reports_errors
def run(
    ctx: typer.Context,
    monitor_id: MonitorId,
    wait: Annotated[bool, typer.Option(help="Wait until the check finished.")] = False,
    json_output: JsonFlag = False,
) -> None:
    """Start a check now."""
    state = use(ctx, json_output)
    check = state.client.run_monitor(monitor_id)
    if wait and not check.finished:
        check = state.client.wait_check(monitor_id, check.id)
    state.answer(check.model_dump(mode="json"), checks_table([check]))


@reports_errors
def pause(ctx: typer.Context, monitor_id: MonitorId, json_output: JsonFlag = False) -> None:
    """Stop scheduled checks."""
    _show_status(ctx, json_output, lambda client: client.pause_monitor(monitor_id))


@reports_errors
def resume(ctx: typer.Context, monitor_id: MonitorId, json_output: JsonFlag = False) -> None:
    """Check on schedule again."""
    _show_status(ctx, json_output, lambda client: client.resume_monitor(monitor_id))


@reports_errors
def checks(
    ctx: typer.Context,
    monitor_id: MonitorId,
    limit: Annotated[int, typer.Option(min=1, help="Checks at most.")] = 20,
    json_output: JsonFlag = False,
) -> None:
    """A monitor's checks, newest first."""
    state = use(ctx, json_output)
    found = [c for _, c in zip(range(limit), state.client.monitor_checks(monitor_id), strict=False)]
    state.answer({"checks": [c.model_dump(mode="json") for c in found]}, checks_table(found))


@reports_errors
def diff(
    ctx: typer.Context,
    monitor_id: MonitorId,
    check_id: Annotated[
        str | None, typer.Argument(help="The check (default: the monitor's last).")
    ] = None,
    status: Annotated[
        str | None, typer.Option(help="Pages of this status (default: changed, new, removed).")
    ] = None,
    json_output: JsonFlag = False,
) -> None:
    """What a check found changed: each page's field diffs and text diff."""
    state = use(ctx, json_output)
    client = state.client
    check_id = check_id or client.get_monitor(monitor_id).last_check_id
    if check_id is None:
        raise typer.BadParameter("the monitor has no check yet")
    wanted = [status] if status else ["changed", "new", "removed"]
    pages = [page for kind in wanted for page in client.check_pages(monitor_id, check_id, kind)]
    if json_output:
        state.emit_json({"check_id": check_id, "pages": [p.model_dump(mode="json") for p in pages]})
        return
    if not pages:
        state.err.print("no page of that status")
    for page in pages:
        state.out.print(_page_text(page))


def monitors_table(monitors: list[Monitor]) -> Table:
    table = Table("id", "name", "status", "schedule", "next check", "last check", "checks")
    for monitor in monitors:
        schedule = monitor.schedule.get("cron") or monitor.schedule.get("text") or ""
        zone = monitor.schedule.get("timezone", "UTC")
        table.add_row(
            monitor.id,
            escape(monitor.name),
            status_text(monitor.status),
            escape(f"{schedule} ({zone})"),
            when(monitor.next_check_at),
            when(monitor.last_check_at),
            str(monitor.checks),
        )
    return table


def checks_table(found: list[MonitorCheck]) -> Table:
    table = Table("id", "status", "trigger", "created", "finished", "pages")
    for check in found:
        summary = ", ".join(
            f"{count} {kind}" for kind, count in check.summary.items() if count and kind != "total"
        )
        table.add_row(
            check.id,
            status_text(check.status),
            check.trigger,
            when(check.created_at),
            when(check.finished_at),
            escape(summary),
        )
    return table


def _page_text(page: MonitorPage) -> str:
    told = "" if page.notify or page.status != "changed" else " (held back: "
    told += ", ".join(page.held_back_by) + ")" if told else ""
    lines = [f"[bold]{escape(page.url)}[/] {page.status}{escape(told)}"]
    for name, change in ((page.diff or {}).get("fields") or {}).items():
        moved = f" ({change['change']:+g})" if "change" in change else ""
        lines.append(
            escape(f"  {name}: {change.get('previous')!r} -> {change.get('current')!r}{moved}")
        )
    text = (page.diff or {}).get("text")
    if text:
        lines += [f"  {escape(line)}" for line in text.splitlines()]
    return "\n".join(lines)


def _show_status(ctx: typer.Context, json_output: bool, change: Any) -> None:
    state = use(ctx, json_output)
    monitor: Monitor = change(state.client)
    state.answer(
        monitor.model_dump(mode="json"),
        f"{monitor.id}: {monitor.status}, next check {when(monitor.next_check_at)}",
    )
