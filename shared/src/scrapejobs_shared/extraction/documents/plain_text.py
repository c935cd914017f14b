"""Plain text of a document as markdown paragraphs: a character markdown would read as syntax
at a paragraph's start escaped."""

from __future__ import annotations

import re
from collections.abc import Iterable

_MARKDOWN_START = re.compile(r"^([#>+=|`~])")


def escaped(text: str) -> str:
    """``text`` with a character markdown would read as syntax at its start escaped (a list
    item's own marker kept)."""
    return _MARKDOWN_START.sub(r"\\\1", text)


def escaped_paragraphs(lines: Iterable[str]) -> str:
    """Each non-empty line a paragraph."""
    return "\n\n".join(escaped(line) for line in lines if line)
