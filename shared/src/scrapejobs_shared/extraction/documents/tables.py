"""A table of cells as a markdown table: the first row its header, each cell on one line, ``|``
escaped."""

from __future__ import annotations

from collections.abc import Sequence


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
