"""Pages that answered but hold nothing the job asked for: a bot challenge, a login wall the job
did not ask for, or a page whose main content is empty. Such a page ends ``failed`` with its
kind as its error's code (``challenge: ...``), is never kept in the page cache, and is counted
apart in the stats (and not charged as a credit). What makes a page one of them is
``extraction/page_checks.py``."""

from __future__ import annotations

from enum import StrEnum


class Unusable(StrEnum):
    CHALLENGE = "challenge"
    LOGIN_WALL = "login_wall"
    EMPTY_CONTENT = "empty_content"


def unusable_kind(error: str | None) -> Unusable | None:
    """The kind a task's error names, if it is one of these."""
    if not error:
        return None
    code = error.split(":", 1)[0]
    try:
        return Unusable(code)
    except ValueError:
        return None
