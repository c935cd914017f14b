"""Applying field specs to a parsed page: selection, ``re``, ``type``, ``all``, ``items``.

Rules (see also :class:`.spec.FieldSpec` and :mod:`.selection` for what a match reads as):

* single value: the first match that survives ``re`` (and, for ``int``/``float``/
  ``bool``, is not empty) gives the value, else ``default``. If converting it fails, the
  error is recorded and the value is ``default``;
* ``all``: a list of every surviving match, in document order. Values that fail
  conversion are left out and one error says how many; no match gives ``[]``, or
  ``default`` when the spec gives a non-null one;
* whitespace-only text nodes (the indentation ``::text`` picks up between tags) are not
  matches. Elements and attributes with empty text are, and give ``""`` (for typed
  fields an empty value counts as missing, not as a conversion error);
* ``items``: one object per element matched (text or attribute matches are skipped with
  an error); no match gives ``[]`` or the non-null ``default``.

Work is bounded: at most :data:`MAX_MATCHES_PER_FIELD` matches are read per field (and
per ``items`` list), and at most :data:`MAX_VALUES_PER_PAGE` values are produced per page
(nested ones included). What goes over a bound is left out and reported in ``errors``.

Errors never raise; they are keyed by field path: ``price`` for a top-level field,
``products[].price`` for a nested one (one entry per path, with the first failing item's
index and the number of items affected).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue

from scrapejobs_shared.extraction.user_regex import UserRegex, user_regex

from .conversion import ConversionError, convert_value
from .selection import (
    SelectionError,
    is_element,
    is_whitespace_text,
    node_string,
    select,
    selector_xpath,
)
from .spec import FieldSpec

MAX_MATCHES_PER_FIELD = 10_000
MAX_VALUES_PER_PAGE = 200_000


@dataclass(slots=True)
class _ErrorEntry:
    message: str
    first_at: str
    count: int = 1


@dataclass(slots=True)
class ErrorLog:
    """Errors keyed by field path, one entry per path however many items fail."""

    _entries: dict[str, _ErrorEntry] = field(default_factory=dict)

    def add(self, key: str, message: str, *, at: str | None = None) -> None:
        entry = self._entries.get(key)
        if entry is None:
            self._entries[key] = _ErrorEntry(message, at or key)
        else:
            entry.count += 1

    def as_dict(self) -> dict[str, str]:
        return {key: _render(key, entry) for key, entry in self._entries.items()}


def _render(key: str, entry: _ErrorEntry) -> str:
    if "[]" not in key:
        return entry.message
    if entry.count == 1:
        return f"{entry.message} (at {entry.first_at})"
    return f"{entry.message} (in {entry.count} items, first at {entry.first_at})"


@dataclass(slots=True)
class FieldRun:
    """The state of one page's field evaluation: document kind, URL resolver, budget, errors."""

    xml: bool
    resolve_url: Callable[[str], str] | None
    errors: ErrorLog = field(default_factory=ErrorLog)
    values_left: int = field(default_factory=lambda: MAX_VALUES_PER_PAGE)

    def take(self, key: str) -> bool:
        """Count one produced value; ``False`` (and an error) once the page budget is spent."""
        if self.values_left > 0:
            self.values_left -= 1
            return True
        self.errors.add(key, f"stopped: more than {MAX_VALUES_PER_PAGE} values on this page")
        return False


def evaluate_fields(
    fields: Mapping[str, FieldSpec], context: Any, run: FieldRun, *, key: str = "", at: str = ""
) -> dict[str, JsonValue]:
    """The values of ``fields`` with ``context`` (an lxml element) as the context node."""
    return {
        name: _evaluate(spec, context, run, f"{key}{name}", f"{at}{name}")
        for name, spec in fields.items()
    }


def _evaluate(spec: FieldSpec, context: Any, run: FieldRun, key: str, at: str) -> JsonValue:
    try:
        expression = selector_xpath(css=spec.css, xpath=spec.xpath, xml=run.xml)
        nodes = select(expression, context)
    except SelectionError as exc:
        run.errors.add(key, str(exc), at=at)
        return spec.default
    except MemoryError:
        raise  # the page's, not the field's: its process is past its memory (worker's limit)
    except Exception as exc:  # cssselect raises its own error types for odd selectors
        run.errors.add(key, f"selector failed: {exc}", at=at)
        return spec.default
    if len(nodes) > MAX_MATCHES_PER_FIELD:
        run.errors.add(
            key,
            f"more than {MAX_MATCHES_PER_FIELD} matches; kept the first {MAX_MATCHES_PER_FIELD}",
            at=at,
        )
        nodes = nodes[:MAX_MATCHES_PER_FIELD]
    if spec.items is not None:
        return _items(spec, spec.items, nodes, run, key, at)
    if spec.all:
        return _all_values(spec, nodes, run, key, at)
    return _first_value(spec, nodes, run, key, at)


def _first_value(spec: FieldSpec, nodes: list[Any], run: FieldRun, key: str, at: str) -> JsonValue:
    pattern = user_regex(spec.re) if spec.re is not None else None
    for text in _texts(nodes, run, pattern, typed=_is_typed(spec)):
        if not run.take(key):
            return spec.default
        if not _is_typed(spec):
            return text
        try:
            return convert_value(text, spec.type or "string")
        except ConversionError as exc:
            run.errors.add(key, str(exc), at=at)
            return spec.default
    return spec.default


def _all_values(spec: FieldSpec, nodes: list[Any], run: FieldRun, key: str, at: str) -> JsonValue:
    pattern = user_regex(spec.re) if spec.re is not None else None
    values: list[JsonValue] = []
    failures: list[str] = []
    for text in _texts(nodes, run, pattern, typed=_is_typed(spec)):
        if not run.take(key):
            break
        if not _is_typed(spec):
            values.append(text)
            continue
        try:
            values.append(convert_value(text, spec.type or "string"))
        except ConversionError as exc:
            failures.append(str(exc))
    if failures:
        total = len(values) + len(failures)
        run.errors.add(key, f"{failures[0]} ({len(failures)} of {total} values left out)", at=at)
    if not values and spec.default is not None:
        return spec.default
    return values


def _items(
    spec: FieldSpec,
    nested: Mapping[str, FieldSpec],
    nodes: list[Any],
    run: FieldRun,
    key: str,
    at: str,
) -> JsonValue:
    containers = [node for node in nodes if is_element(node)]
    if len(containers) < len(nodes):
        skipped = len(nodes) - len(containers)
        run.errors.add(key, f"'items' needs elements; {skipped} non-element matches skipped", at=at)
    objects: list[JsonValue] = []
    for index, container in enumerate(containers):
        if not run.take(key):
            break
        objects.append(
            evaluate_fields(nested, container, run, key=f"{key}[].", at=f"{at}[{index}].")
        )
    if not objects and spec.default is not None:
        return spec.default
    return objects


def _is_typed(spec: FieldSpec) -> bool:
    return spec.type is not None and spec.type != "string"


def _texts(
    nodes: list[Any], run: FieldRun, pattern: UserRegex | None, *, typed: bool
) -> Iterator[str]:
    """The matches as strings, after ``re``; non-matches and (if typed) empty values dropped."""
    for node in nodes:
        if is_whitespace_text(node):
            continue
        text: str | None = node_string(node, run.resolve_url, xml=run.xml)
        if pattern is not None and text is not None:
            text = regex_value(pattern, text)
        if text is None or (typed and not text.strip()):
            continue
        yield text


def regex_value(pattern: UserRegex, text: str) -> str | None:
    """The first group that took part in the first match (the whole match without groups)."""
    match = pattern.search(text)
    if match is None:
        return None
    if not pattern.groups:
        return match.group(0)
    return next((group for group in match.groups() if group is not None), None)
