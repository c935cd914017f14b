"""The ``validate`` stage: check a result's ``data`` against a JSON Schema (the ``jsonschema``
library).

The draft is the one the schema's ``$schema`` names, draft 2020-12 otherwise; ``format`` is
asserted (with the formats the library checks without extra packages); references must be
local (``#...``): nothing is ever fetched. Problems are reported per instance location as a
JSON path (``$`` the whole object, ``$.price``, ``$.tags[0]``), sorted by it, each location's
messages joined with ``; ``, at most :data:`MAX_PROBLEMS` locations.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jsonschema import Draft7Validator, Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for
from referencing.exceptions import Unresolvable

from scrapejobs_shared.pipeline.failure import StageRejected

MAX_PROBLEMS = 20
MAX_MESSAGE_CHARS = 300


def check_schema(schema: dict[str, Any]) -> None:
    """Raise ``ValueError`` naming the problem when ``schema`` is not a valid JSON Schema of
    its draft, or refers to anything outside itself."""
    if "$schema" in schema and not _known_draft(schema):
        raise ValueError(f"unknown '$schema' {schema['$schema']!r}: name a JSON Schema draft")
    validator = validator_for(schema, default=Draft202012Validator)
    try:
        validator.check_schema(schema)
    except SchemaError as exc:
        where = "".join(f"[{part!r}]" for part in exc.path)
        at = f" at {where}" if where else ""
        raise ValueError(f"invalid JSON Schema{at}: {_short(exc.message)}") from None
    remote = _remote_reference(schema)
    if remote is not None:
        raise ValueError(f"only local references ('#...') are supported, got {remote!r}")


def validate(schema: Mapping[str, Any], data: Mapping[str, Any]) -> None:
    """Raise :class:`StageRejected` with the schema errors when ``data`` does not conform."""
    cls = validator_for(schema, default=Draft202012Validator)
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    problems: dict[str, list[str]] = {}
    try:
        for error in validator.iter_errors(data):
            problems.setdefault(error.json_path, []).append(_short(error.message))
    except Unresolvable as exc:
        problems.setdefault("$", []).append(f"unresolvable reference: {exc}")
    if problems:
        ordered = sorted(problems.items())[:MAX_PROBLEMS]
        raise StageRejected({path: "; ".join(messages) for path, messages in ordered})


def _known_draft(schema: dict[str, Any]) -> bool:
    """Whether ``$schema`` names a draft the library knows (an unknown one gives the default,
    whichever it is)."""
    return validator_for(schema, default=Draft202012Validator) is validator_for(
        schema, default=Draft7Validator
    )


def _remote_reference(node: Any) -> str | None:
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key in ("$ref", "$dynamicRef") and isinstance(value, str):
                if not value.startswith("#"):
                    return value
            elif (found := _remote_reference(value)) is not None:
                return found
    elif isinstance(node, list):
        for item in node:
            if (found := _remote_reference(item)) is not None:
                return found
    return None


def _short(message: str) -> str:
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    return message[: MAX_MESSAGE_CHARS - 1] + "…"
