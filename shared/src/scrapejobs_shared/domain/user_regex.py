"""Regular expressions written by users, run on RE2: matching time linear in the text.

Every pattern a caller gives (an extraction field's ``re``, a crawl's ``include`` /
``exclude``, a JSON Schema's ``pattern`` and ``patternProperties``, the EXSLT ``re:``
functions inside an XPath) is compiled here, never by Python's backtracking ``re``: on
``re``, ``(a+)+$`` against forty characters runs for hours; on RE2 it is microseconds.

RE2's syntax is Python's without what needs backtracking: no backreferences (``\\1``,
``(?P=name)``), no lookahead or lookbehind (``(?=``, ``(?!``, ``(?<=``, ``(?<!``), no
possessive or atomic groups, no conditionals. ``\\d``, ``\\w``, ``\\s`` and ``\\b`` are
ASCII (write ``\\p{N}``, ``\\p{L}`` for Unicode classes); inline flags ``(?i)``, ``(?s)``,
``(?m)`` work. A pattern RE2 cannot take is refused when the job is submitted, with a
message naming what it met (:class:`UnsupportedRegex`, a ``ValueError``).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Protocol

import re2  # type: ignore[import-untyped]

MAX_PROGRAM_BYTES = 8 << 20  # RE2's own default: a pattern whose automaton needs more fails


class UnsupportedRegex(ValueError):
    """A pattern RE2 does not accept (backreferences, lookaround...) or that is not valid."""


class RegexMatch(Protocol):
    def group(self, index: int | str = 0, /) -> str | None: ...
    def groups(self, default: str | None = None) -> tuple[str | None, ...]: ...
    def start(self, index: int | str = 0, /) -> int: ...
    def end(self, index: int | str = 0, /) -> int: ...


class UserRegex(Protocol):
    """The part of a compiled pattern the system uses (the ``re.Pattern`` interface)."""

    @property
    def pattern(self) -> str: ...
    @property
    def groups(self) -> int: ...
    def search(self, text: str, /) -> RegexMatch | None: ...
    def finditer(self, text: str, /) -> Iterator[RegexMatch]: ...
    def findall(self, text: str, /) -> list[str | tuple[str, ...]]: ...
    def sub(self, replacement: str, text: str, /, count: int = 0) -> str: ...


def _options(ignore_case: bool) -> object:
    options = re2.Options()
    options.log_errors = False  # the binding would print every refused pattern to stderr
    options.max_mem = MAX_PROGRAM_BYTES
    options.case_sensitive = not ignore_case
    return options


@lru_cache(maxsize=4096)
def user_regex(pattern: str, *, ignore_case: bool = False) -> UserRegex:
    """``pattern`` compiled on RE2 (cached per process); :class:`UnsupportedRegex` when it
    cannot be."""
    if not isinstance(pattern, str):
        raise UnsupportedRegex("a regular expression must be a string")
    try:
        compiled: UserRegex = re2.compile(pattern, _options(ignore_case))
    except re2.error as exc:
        raise UnsupportedRegex(f"invalid regular expression: {_reason(exc)} ({SYNTAX})") from None
    except (UnicodeEncodeError, TypeError):
        raise UnsupportedRegex("invalid regular expression: not valid Unicode text") from None
    return compiled


SYNTAX = "RE2 syntax: no backreferences, lookaround or possessive groups"


def _reason(exc: BaseException) -> str:
    detail = exc.args[0] if exc.args else exc
    if isinstance(detail, bytes):
        detail = detail.decode("utf-8", "replace")
    return str(detail)
