"""Keeping a stored result under Firestore's 1 MiB document limit.

Sizes are measured as compact UTF-8 JSON (:func:`json_size`: no spaces, non-ASCII
characters as themselves), a close stand-in for Firestore's own accounting that leaves
room for the rest of the document under the default 900,000-byte budget.

:func:`fit_result` shrinks the largest values first, only as much as needed: it finds
the size cap at which the values fit, keeps every value under the cap whole and cuts each
larger one down to the cap (so two big fields are both kept in part, rather than the
biggest emptied and the next untouched):

* a string is cut and ends with :data:`TRUNCATION_MARKER`;
* a list keeps its leading items (when even the first does not fit, that item is shrunk);
* an object has its own largest values shrunk, recursively;
* numbers, booleans and nulls are kept.

No field is ever removed: a truncated field keeps its key (at worst with an empty
string, list or object) and is named in the returned list, which the caller stores as
``truncated_fields``. When the keys alone exceed the budget the result is as small as it
can be, still over: callers with tiny budgets should check :func:`json_size`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from pydantic import JsonValue

DEFAULT_MAX_BYTES = 900_000
TRUNCATION_MARKER = "…[truncated]"


def json_size(value: JsonValue) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def fit_result(
    data: Mapping[str, JsonValue], *, max_bytes: int = DEFAULT_MAX_BYTES
) -> tuple[dict[str, JsonValue], list[str]]:
    """``data`` shrunk to at most ``max_bytes`` of JSON, and the names of the fields cut.

    The input is not modified; when it already fits it is returned as an equal copy with
    no truncated fields.
    """
    whole = dict(data)
    if json_size(whole) <= max_bytes:  # nearly always: one encoding rather than one per field
        return whole, []
    fitted, changed = _fit_object(data, max_bytes)
    return fitted, [name for name in data if name in changed]


def _fit_object(
    data: Mapping[str, JsonValue], budget: int
) -> tuple[dict[str, JsonValue], set[str]]:
    sizes = {key: json_size(value) for key, value in data.items()}
    # The object's JSON without its values: braces, keys, colons and commas.
    overhead = json_size(dict.fromkeys(data, 0)) - len(data)
    if overhead + sum(sizes.values()) <= budget:
        return dict(data), set()
    cap = _size_cap(sorted(sizes.values()), budget - overhead)
    result = dict(data)
    changed: set[str] = set()
    for key, size in sizes.items():
        if size > cap:
            shrunk = shrink(data[key], cap)
            if json_size(shrunk) < size:
                result[key] = shrunk
                changed.add(key)
    return result, changed


def _size_cap(ascending_sizes: list[int], room: int) -> int:
    """The largest per-value size such that values capped at it fit in ``room`` bytes.

    Values smaller than the cap are kept whole; only the largest ones are cut, all to
    the same size, so each keeps a useful share instead of the biggest being emptied.
    """
    remaining = len(ascending_sizes)
    for size in ascending_sizes:
        if size * remaining > room:
            return max(room // remaining, 0)
        room -= size
        remaining -= 1
    return max(ascending_sizes, default=0)


def shrink(value: JsonValue, budget: int) -> JsonValue:
    """``value`` cut down to at most ``budget`` bytes of JSON when it can be."""
    if json_size(value) <= budget:
        return value
    if isinstance(value, str):
        return _shrink_string(value, budget)
    if isinstance(value, list):
        return _shrink_list(value, budget)
    if isinstance(value, dict):
        return _fit_object(value, budget)[0]
    return value


def _shrink_string(text: str, budget: int) -> str:
    marker_size = json_size(TRUNCATION_MARKER) - 2
    room = budget - 2 - marker_size  # quotes and marker
    if room <= 0:
        return TRUNCATION_MARKER if budget >= marker_size + 2 else ""
    length = min(len(text), room)  # a character is at least one byte
    while length > 0:
        candidate = text[:length] + TRUNCATION_MARKER
        size = json_size(candidate)
        if size <= budget:
            return candidate
        length = min(length - 1, int(length * budget / size))
    return TRUNCATION_MARKER


def _shrink_list(items: list[JsonValue], budget: int) -> list[JsonValue]:
    kept: list[JsonValue] = []
    used = 2  # brackets
    for item in items:
        size = json_size(item) + (1 if kept else 0)
        if used + size > budget:
            break
        kept.append(item)
        used += size
    if not kept and items and budget > 2:
        first = shrink(items[0], budget - 2)
        if json_size(first) <= budget - 2:
            kept.append(first)
    return kept
