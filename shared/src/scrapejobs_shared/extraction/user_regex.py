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

RE2 matches in linear time but *compiles* large programs slowly: ``\\pL{400}`` (a Unicode
class of ~600 ranges repeated) costs ~0.3 s of CPU and ~10 MB under RE2's default 8 MiB. So:

* :func:`check_syntax` is what request validation runs: a compile under a budget so small that
  a valid pattern fails it at once as "too large" (under ~1 ms whatever the pattern), so that
  validating a request (or decoding a stored job) never pays a real compilation.
* :func:`user_regex` compiles within :data:`PATTERN_MEMORY_BYTES` (512 KiB of RE2 program and
  DFA: under ~10 ms of CPU whatever the pattern; a pattern that needs more fails as
  :class:`CostlyRegex`), and keeps at most :data:`CACHED_PATTERNS` programs per process, so
  the cache holds at most ``CACHED_PATTERNS x PATTERN_MEMORY_BYTES`` (32 MiB) whoever wrote them.
  The binding's own cache (``re2.compile`` keeps 128 programs) is stepped around
  (re2_internals.py).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from threading import Lock
from typing import Protocol

import re2  # type: ignore[import-untyped]

from scrapejobs_shared.errors import InvalidInput
from scrapejobs_shared.extraction.re2_internals import compile_uncached

PATTERN_MEMORY_BYTES = 512 << 10  # RE2's budget for one pattern: program and DFA caches
CACHED_PATTERNS = 64  # compiled programs a process keeps (the least recently used go first)
SYNTAX_MEMORY_BYTES = 4 << 10  # a budget no real program fits: a syntax check, not a compile
MAX_PATTERN_CHARS = 1000
_TOO_LARGE = "pattern too large"


class UnsupportedRegex(InvalidInput):
    """A pattern RE2 does not accept (backreferences, lookaround...) or that is not valid."""


class CostlyRegex(UnsupportedRegex):
    """A valid pattern whose compiled program needs more than :data:`PATTERN_MEMORY_BYTES`."""


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


def _options(ignore_case: bool, max_mem: int) -> object:
    options = re2.Options()
    options.log_errors = False  # the binding would print every refused pattern to stderr
    options.max_mem = max_mem
    options.case_sensitive = not ignore_case
    return options


def check_syntax(pattern: str, *, ignore_case: bool = False) -> None:
    """:class:`UnsupportedRegex` unless ``pattern`` is RE2 syntax, without compiling it (its
    cost is :func:`user_regex`'s to find: ``CostlyRegex``)."""
    _checked(pattern)
    try:
        compile_uncached(pattern, _options(ignore_case, SYNTAX_MEMORY_BYTES))
    except re2.error as exc:
        if _TOO_LARGE not in _reason(exc):
            raise UnsupportedRegex(
                f"invalid regular expression: {_reason(exc)} ({SYNTAX})"
            ) from None
    except (UnicodeEncodeError, TypeError):
        raise UnsupportedRegex("invalid regular expression: not valid Unicode text") from None


def user_regex(pattern: str, *, ignore_case: bool = False) -> UserRegex:
    """``pattern`` compiled on RE2 within :data:`PATTERN_MEMORY_BYTES` (the last
    :data:`CACHED_PATTERNS` kept per process); :class:`UnsupportedRegex` when it cannot be
    (:class:`CostlyRegex` when it needs more memory)."""
    key = (pattern, ignore_case)
    with _lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
            return found
    compiled = compile_within_budget(pattern, ignore_case=ignore_case)
    with _lock:
        _cache[key] = compiled
        while len(_cache) > CACHED_PATTERNS:
            _cache.popitem(last=False)
    return compiled


def compile_within_budget(pattern: str, *, ignore_case: bool = False) -> UserRegex:
    """``pattern`` compiled, not cached (what a submission's pattern budget runs off the event
    loop, dropping the program at once)."""
    _checked(pattern)
    try:
        compiled: UserRegex = compile_uncached(pattern, _options(ignore_case, PATTERN_MEMORY_BYTES))
    except re2.error as exc:
        if _TOO_LARGE in _reason(exc):
            raise CostlyRegex(
                f"regular expression too costly: compiled, it needs more than "
                f"{PATTERN_MEMORY_BYTES >> 10} KiB of memory (a large Unicode class such as "
                f"\\pL repeated many times is the usual cause: repeat it with + or * instead)"
            ) from None
        raise UnsupportedRegex(f"invalid regular expression: {_reason(exc)} ({SYNTAX})") from None
    except (UnicodeEncodeError, TypeError):
        raise UnsupportedRegex("invalid regular expression: not valid Unicode text") from None
    return compiled


def _checked(pattern: object) -> None:
    if not isinstance(pattern, str):
        raise UnsupportedRegex("a regular expression must be a string")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise UnsupportedRegex(f"a regular expression holds at most {MAX_PATTERN_CHARS} characters")


_cache: OrderedDict[tuple[str, bool], UserRegex] = OrderedDict()  # process-wide, like re's
_lock = Lock()

SYNTAX = "RE2 syntax: no backreferences, lookaround or possessive groups"


def _reason(exc: BaseException) -> str:
    detail = exc.args[0] if exc.args else exc
    if isinstance(detail, bytes):
        detail = detail.decode("utf-8", "replace")
    return str(detail)
