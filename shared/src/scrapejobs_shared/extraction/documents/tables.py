"""A table of cells as a markdown table: the first row its header, each cell on one line, ``|``
escaped; a CSV text as one."""

from __future__ import annotations

import csv
from collections.abc import Sequence

MAX_CSV_CELLS = 2_000_000  # cells of a CSV made a table, at most (the rest left out)


def markdown_table(rows: Sequence[Sequence[str]]) -> str:
    if not rows:
        return ""
    width = max(len(row) for row in rows)
    lines = [_row(rows[0], width), _row(["---"] * width, width)]
    lines += [_row(row, width) for row in rows[1:]]
    return "\n".join(lines)


def _row(cells: Sequence[str], width: int) -> str:
    padded = [*cells, *[""] * (width - len(cells))]
    return "| " + " | ".join(" ".join(c.split()).replace("|", "\\|") for c in padded) + " |"


def csv_markdown(text: str) -> str | None:
    """A CSV text (comma, semicolon or tab separated, as the text says) as a markdown table;
    None when it is not one (a single column, ragged rows, a quote left open)."""
    lines = text.splitlines()
    if len(lines) < 2:
        return None
    try:
        dialect = csv.Sniffer().sniff("\n".join(lines[:20]), delimiters=",;\t")
        rows: list[list[str]] = []
        cells = 0
        for row in csv.reader(lines, dialect):
            if not row:
                continue
            rows.append(row)
            cells += len(row)
            if cells >= MAX_CSV_CELLS:
                break
    except csv.Error:
        return None
    widths = {len(row) for row in rows}
    if len(widths) != 1 or widths == {1}:
        return None
    return markdown_table(rows)
