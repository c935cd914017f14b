"""What every command shares: the connection settings, the client (made on first use), the two
consoles, the exit codes, and the one place an API error becomes a message and an exit code."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, ParamSpec

import typer
from rich.console import Console
from rich.markup import escape

from scrapejobs_client.client import DEFAULT_API_URL, Client
from scrapejobs_client.errors import ApiError, ApiUnreachable, ScrapejobsError
from scrapejobs_client.retries import RetryPolicy

P = ParamSpec("P")


class ExitCode(IntEnum):
    """The command's exit status (documented in docs/operations.md, "CLI")."""

    OK = 0
    ERROR = 1
    """The API answered with an error (an unknown job: "not found"), or could not be reached."""
    USAGE = 2
    """A wrong option or argument, an unreadable input file (Click's own code)."""
    JOB_UNSUCCESSFUL = 3
    """``--wait``: the job finished with failed or dead-lettered tasks, or was cancelled."""
    DEGRADED = 4
    """``health``: the service is DEGRADED."""
    UNHEALTHY = 5
    """``health``: the service is UNHEALTHY."""
    WAIT_TIMEOUT = 6
    """``--wait --timeout``, ``scrape``: the job had not finished in time (it keeps running)."""
    INTERRUPTED = 130
    """Ctrl-C while waiting (the job keeps running)."""


@dataclass(frozen=True)
class CliConfig:
    api_url: str = DEFAULT_API_URL
    api_key: str | None = None
    iam: bool = False
    audience: str | None = None
    timeout_s: float = 30.0
    attempts: int = 5


def make_client(config: CliConfig) -> Client:
    return Client(
        config.api_url,
        api_key=config.api_key or None,
        iam=config.iam,
        id_token_audience=config.audience,
        timeout_s=config.timeout_s,
        retry=RetryPolicy(attempts=config.attempts),
    )


@dataclass
class CliState:
    """``ctx.obj`` of every command. Tests pass their own (``CliRunner.invoke(obj=...)``) to
    make the client on a mock transport."""

    client_factory: Callable[[CliConfig], Client] = make_client
    config: CliConfig = field(default_factory=CliConfig)
    json_output: bool = False
    out: Console = field(default_factory=lambda: Console(highlight=False, soft_wrap=False))
    err: Console = field(default_factory=lambda: Console(stderr=True, highlight=False))
    _client: Client | None = None

    @property
    def client(self) -> Client:
        if self._client is None:
            try:
                self._client = self.client_factory(self.config)
            except ValueError as exc:  # e.g. an API key and --iam together
                raise typer.BadParameter(str(exc), param_hint="--api-key/--iam") from None
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def answer(self, value: Any, text: Any) -> None:
        """What a command answers: ``value`` as JSON with ``--json``, else ``text`` printed."""
        if self.json_output:
            self.emit_json(value)
        else:
            self.out.print(text)

    def emit_json(self, value: Any) -> None:
        """One line of JSON on stdout (not through Rich: no wrapping, no markup)."""
        sys.stdout.write(json.dumps(value, ensure_ascii=False, default=str) + "\n")
        sys.stdout.flush()


def state_of(ctx: typer.Context) -> CliState:
    state = ctx.find_object(CliState)
    if state is None:  # a command invoked without the app's callback (not through the app)
        state = CliState()
        ctx.obj = state
    return state


def use(ctx: typer.Context, json_output: bool) -> CliState:
    """The command's state, with its ``--json`` flag recorded (errors are printed to match)."""
    state = state_of(ctx)
    state.json_output = json_output
    return state


def reports_errors(command: Callable[P, None]) -> Callable[P, None]:
    """Decorates a command (whose first parameter is ``ctx``): the client's errors become a
    message on stderr and exit code 1."""

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            command(*args, **kwargs)
        except ScrapejobsError as exc:
            ctx = kwargs.get("ctx", args[0] if args else None)
            find = getattr(ctx, "find_object", None)  # typer passes click's own Context
            state = find(CliState) if callable(find) else None
            report_error(state if isinstance(state, CliState) else CliState(), exc)
            raise typer.Exit(ExitCode.ERROR) from None

    return run


def report_error(state: CliState, error: ScrapejobsError) -> None:
    if state.json_output:
        body: dict[str, Any] = {"message": _message(error)}
        if isinstance(error, ApiError):
            body |= {"status": error.status, "code": error.code, "field": error.field}
        sys.stderr.write(json.dumps({"error": body}) + "\n")
        return
    state.err.print(f"[bold red]error:[/] {escape(_message(error))}", highlight=False)


def _message(error: ScrapejobsError) -> str:
    if isinstance(error, ApiError):
        return error.message
    if isinstance(error, ApiUnreachable):
        return str(error)
    return str(error) or type(error).__name__
