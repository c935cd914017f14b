"""The ``scrapejobs`` command line (needs the ``cli`` extra: typer, rich, pyyaml)."""

from scrapejobs_client.cli.app import app, main
from scrapejobs_client.cli.state import CliConfig, CliState, ExitCode

__all__ = ["CliConfig", "CliState", "ExitCode", "app", "main"]
