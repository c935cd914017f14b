"""Writing a job's results as they arrive, page by page: a Rich table, JSON lines, or CSV.

CSV columns are fixed by the first page: the result's own fields, then one ``data.<field>``
column per extracted field seen in that page; a field first seen on a later page (a job whose
first results all failed, say) goes into the last column, ``data.other``, as JSON, so nothing
is lost. Lists and objects are written as JSON. A text cell that a spreadsheet would read as a
formula (it begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) is written with a
leading ``'`` (OWASP's CSV injection rule), as the API's own export does.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from typing import Any, Protocol, TextIO

from rich.console import Console

from scrapejobs_client.cli.render import results_table
from scrapejobs_client.models import TaskResult

CSV_BASE_COLUMNS = (
    "id",
    "url",
    "status",
    "http_status",
    "error",
    "attempts",
    "replays",
    "fetched_at",
    "elapsed_ms",
    "rendered_ms",
)
CSV_OTHER_COLUMN = "data.other"


class ResultsWriter(Protocol):
    def write_page(self, results: Sequence[TaskResult]) -> None: ...


class JsonLinesWriter:
    def __init__(self, out: TextIO) -> None:
        self._out = out

    def write_page(self, results: Sequence[TaskResult]) -> None:
        for result in results:
            line = json.dumps(result.model_dump(mode="json"), ensure_ascii=False)
            self._out.write(line + "\n")
        self._out.flush()


class CsvWriter:
    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._writer = csv.writer(out)
        self._fields: list[str] | None = None

    def write_page(self, results: Sequence[TaskResult]) -> None:
        if self._fields is None:
            self._fields = sorted({key for r in results for key in (r.data or {})})
            header = [*CSV_BASE_COLUMNS, *(f"data.{f}" for f in self._fields), CSV_OTHER_COLUMN]
            self._writer.writerow(header)
        for result in results:
            self._writer.writerow(self._row(result, self._fields))
        self._out.flush()

    @staticmethod
    def _row(result: TaskResult, fields: list[str]) -> list[str]:
        dumped = result.model_dump(mode="json")
        data = result.data or {}
        other = {k: v for k, v in data.items() if k not in fields}
        row = [_cell(dumped.get(column)) for column in CSV_BASE_COLUMNS]
        row += [_cell(data.get(field)) for field in fields]
        row.append(json.dumps(other, ensure_ascii=False) if other else "")
        return row


class TableWriter:
    """One Rich table per page (the header on the first), printed as each page arrives."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._header = True

    def write_page(self, results: Sequence[TaskResult]) -> None:
        if results or self._header:
            self._console.print(results_table(results, header=self._header))
        self._header = False


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value  # a spreadsheet would run it as a formula
    return str(value)
