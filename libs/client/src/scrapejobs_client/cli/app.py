"""``scrapejobs``: the command line for the scrapejobs API (on ``scrapejobs_client.Client``).

The commands live in job_commands.py and operation_commands.py; this module builds the Typer
application and registers them. Every command takes ``--json`` (machine-readable output on
stdout); errors go to stderr with the API's own message; exit codes are ``ExitCode`` (see
docs/operations.md, "CLI").
"""

from __future__ import annotations

from typing import Annotated

import typer

from scrapejobs_client.cli import (
    job_commands,
    monitor_commands,
    operation_commands,
    parse_command,
    search_command,
    tenant_commands,
)
from scrapejobs_client.cli.state import (
    CliConfig,
    CliState,
    state_of,
)
from scrapejobs_client.client import DEFAULT_API_URL

app = typer.Typer(
    help="Submit scraping jobs to a scrapejobs API and inspect them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
dead_letters_app = typer.Typer(
    help="Tasks that failed after all their delivery attempts.", no_args_is_help=True
)
app.add_typer(dead_letters_app, name="dead-letters")
keys_app = typer.Typer(help="API keys of tenants (admin keys only).", no_args_is_help=True)
app.add_typer(keys_app, name="keys")
monitor_app = typer.Typer(
    help="Pages watched on a schedule, and what changed.", no_args_is_help=True
)
app.add_typer(monitor_app, name="monitor")


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


# the commands, in the order ``--help`` lists them
app.command()(job_commands.submit)
app.command()(job_commands.scrape)
app.command()(parse_command.parse)
app.command()(job_commands.status)
app.command("ls")(job_commands.list_jobs)
app.command()(job_commands.results)
app.command()(job_commands.cancel)
app.command()(job_commands.retry)
app.command()(job_commands.delete)
dead_letters_app.command("ls")(operation_commands.dead_letters_ls)
dead_letters_app.command("replay")(operation_commands.dead_letters_replay)
app.command()(operation_commands.hosts)
app.command()(operation_commands.workers)
app.command()(operation_commands.stats)
app.command()(operation_commands.health)
keys_app.command("create")(tenant_commands.create)
keys_app.command("ls")(tenant_commands.ls)
keys_app.command("revoke")(tenant_commands.revoke)
app.command()(tenant_commands.usage)
app.command()(tenant_commands.quota)
app.command()(tenant_commands.proxies)
app.command()(search_command.search)
for command in ("create", "ls", "show", "run", "pause", "resume", "checks", "diff"):
    monitor_app.command(command)(getattr(monitor_commands, command))


def main() -> None:
    """Console script entry point."""
    app(prog_name="scrapejobs")


__all__ = ["app", "main", "state_of"]
