"""Arguments and options every command of the CLI shares."""

from __future__ import annotations

from typing import Annotated

import typer

JsonFlag = Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")]
JobId = Annotated[str, typer.Argument(help="The job's id.", show_default=False)]
