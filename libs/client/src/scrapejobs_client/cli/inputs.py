"""Reading what the user hands the CLI: URLs (arguments, a file, stdin), JSON or YAML files,
``key=value`` labels. Problems are ``typer.BadParameter`` (exit code 2, named option)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

import typer
import yaml

STDIN = "-"


def read_urls(arguments: Iterable[str], file: str | None, stdin: TextIO | None = None) -> list[str]:
    """URLs from the arguments, then from ``file``; ``-`` (as an argument or as the file) reads
    stdin. In a file: one URL a line, blank lines and ``#`` comments skipped."""
    urls: list[str] = []
    sources = [*arguments, *([] if file is None else [f"@{file}"])]
    read_stdin = False
    for source in sources:
        if source in (STDIN, f"@{STDIN}"):
            if read_stdin:
                continue
            read_stdin = True
            urls.extend(_lines(stdin or sys.stdin))
        elif source.startswith("@"):
            path = Path(source[1:])
            try:
                with path.open(encoding="utf-8") as handle:
                    urls.extend(_lines(handle))
            except OSError as exc:
                message = f"cannot read {path}: {exc.strerror}"
                raise typer.BadParameter(message, param_hint="--file") from None
        else:
            urls.append(source)
    return urls


def _lines(handle: TextIO) -> Iterator[str]:
    for line in handle:
        line = line.strip()
        if line and not line.startswith("#"):
            yield line


def _read_document(path: Path, option: str) -> Any:
    """A JSON (``.json``) or YAML (anything else; YAML also reads JSON) file's value."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise typer.BadParameter(f"cannot read {path}: {exc.strerror}", param_hint=option) from None
    try:
        return json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        message = f"{path} is not valid JSON or YAML: {exc}"
        raise typer.BadParameter(message, param_hint=option) from None


def read_list(path: Path, option: str) -> list[Any]:
    """A JSON or YAML file holding a list (browser actions)."""
    value = _read_document(path, option)
    if not isinstance(value, list):
        raise typer.BadParameter(f"{path} must hold a list", param_hint=option)
    return value


def read_mapping(path: Path, option: str) -> dict[str, Any]:
    """A JSON (``.json``) or YAML (anything else; YAML also reads JSON) file holding a mapping."""
    value = _read_document(path, option)
    if not isinstance(value, dict):
        raise typer.BadParameter(
            f"{path} must hold a mapping (field name → spec)", param_hint=option
        )
    return value


def parse_labels(pairs: Iterable[str]) -> dict[str, str]:
    labels: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"{pair!r} is not key=value", param_hint="--label")
        labels[key] = value
    return labels
