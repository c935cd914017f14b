"""The one place a private name of google-re2 is used, pinned in shared/pyproject.toml and
held by tests/unit/extraction/test_bounded_expressions.py (which fails on an upgrade that
moves it).

``re2.compile`` keeps the last 128 programs it compiled in an ``lru_cache`` of its own
(``re2._Regexp._make``), whatever their size: with RE2's 8 MiB default up to 1 GiB per process,
and a cache shared by every tenant whose pages a process extracts (its ``cache_info()`` shows
the programs it holds: tests/unit/extraction/test_bounded_expressions.py). ``_Regexp`` itself
compiles one program without that cache; user_regex.py keeps its own, bounded by count and
budget.
"""

from __future__ import annotations

from typing import Any

import re2  # type: ignore[import-untyped]


def compile_uncached(pattern: str, options: object) -> Any:
    """``re2.compile(pattern, options)`` without the binding's cache (raises ``re2.error``)."""
    return re2._Regexp(pattern, options)
