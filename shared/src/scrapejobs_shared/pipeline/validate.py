"""The ``validate`` stage: check a result's ``data`` against a JSON Schema (the ``jsonschema``
library).

The draft is the one the schema's ``$schema`` names, draft 2020-12 otherwise; ``format`` is
asserted (with the formats the library checks without extra packages); references must be
local (``#...``): nothing is ever fetched; a reference must not resolve to itself through
nothing but references. Regular expressions (``pattern``, ``patternProperties``) run on RE2
(:mod:`scrapejobs_shared.extraction.user_regex`), and one RE2 cannot take is refused with the
schema. Problems are reported per instance location as a
JSON path (``$`` the whole object, ``$.price``, ``$.tags[0]``), sorted by it, each location's
messages joined with ``; ``, at most :data:`MAX_PROBLEMS` locations.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from jsonschema import Draft7Validator, Draft202012Validator, ValidationError
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator
from jsonschema.validators import extend, validator_for
from referencing.exceptions import Unresolvable

from scrapejobs_shared.extraction.user_regex import UnsupportedRegex, check_syntax, user_regex
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
    remote = next((ref for ref in _references(schema) if not ref.startswith("#")), None)
    if remote is not None:
        raise ValueError(f"only local references ('#...') are supported, got {remote!r}")
    for where, pattern in schema_patterns(schema, ""):
        try:
            check_syntax(pattern)  # compiled within its budget by the submission's rules
        except UnsupportedRegex as exc:
            raise ValueError(f"invalid JSON Schema at {where}: {exc}") from None
    looping = _self_reference(schema)
    if looping is not None:
        raise ValueError(f"invalid JSON Schema: the reference {looping!r} resolves to itself")


def validate(schema: Mapping[str, Any], data: Mapping[str, Any]) -> None:
    """Raise :class:`StageRejected` with the schema errors when ``data`` does not conform."""
    cls = _linear_time(validator_for(schema, default=Draft202012Validator))
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


@lru_cache(maxsize=8)
def _linear_time(cls: type[Validator]) -> type[Validator]:
    """The draft's validator with its regular-expression keywords on RE2."""
    return extend(  # type: ignore[no-any-return,no-untyped-call]
        cls,
        {
            "pattern": _pattern,
            "patternProperties": _pattern_properties,
            "additionalProperties": _additional_properties,
        },
    )


def _pattern(
    validator: Validator, pattern: str, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and user_regex(pattern).search(instance) is None:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        regex = user_regex(pattern)
        for key, value in instance.items():
            if regex.search(key) is not None:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, allowed: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    """jsonschema's own keyword, with the property patterns matched on RE2."""
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = [user_regex(pattern) for pattern in schema.get("patternProperties", {})]
    extras = sorted(
        key
        for key in instance
        if key not in properties and not any(p.search(key) is not None for p in patterns)
    )
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif not allowed and extras:
        joined = ", ".join(repr(each) for each in extras)
        if patterns:
            listed = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield ValidationError(f"{joined} do not match any of the regexes: {listed}")
        else:
            yield ValidationError(f"Additional properties are not allowed ({joined} unexpected)")


def schema_patterns(node: Any, where: str) -> Iterator[tuple[str, str]]:
    """Every regular expression a schema holds, with where it is."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            at = f"{where}[{key!r}]"
            if key == "pattern" and isinstance(value, str):
                yield at, value
            elif key == "patternProperties" and isinstance(value, Mapping):
                for pattern in value:
                    yield f"{at}[{pattern!r}]", pattern
            if isinstance(value, Mapping | list):
                yield from schema_patterns(value, at)
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from schema_patterns(item, f"{where}[{index}]")


def _self_reference(schema: Mapping[str, Any]) -> str | None:
    """A local reference that comes back to itself without descending into the instance
    (``{"$ref": "#"}``, ``{"allOf": [{"$ref": "#"}]}``): validating anything with it would
    never end. Returns the first such reference."""
    for reference in _references(schema):
        pending = [reference]
        seen: set[str] = set()
        while pending:
            current = pending.pop()
            if current in seen:
                continue
            seen.add(current)
            for following in _in_place_references(_pointer(schema, current)):
                if following == reference:
                    return reference
                pending.append(following)
    return None


_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
_IN_PLACE_ONE = ("not", "if", "then", "else")


def _in_place_references(node: Any) -> Iterator[str]:
    """The references a schema applies to the same instance (through ``$ref`` and the
    in-place applicators), not those under keywords that descend into it."""
    if not isinstance(node, Mapping):
        return
    if isinstance(node.get("$ref"), str):
        yield node["$ref"]
    for key in _IN_PLACE_LISTS:
        for child in node.get(key) or ():
            yield from _in_place_references(child)
    for key in _IN_PLACE_ONE:
        yield from _in_place_references(node.get(key))
    dependent = node.get("dependentSchemas")
    if isinstance(dependent, Mapping):
        for child in dependent.values():
            yield from _in_place_references(child)


def _references(node: Any) -> Iterator[str]:
    """Every ``$ref`` and ``$dynamicRef`` a schema holds."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key in ("$ref", "$dynamicRef") and isinstance(value, str):
                yield value
            elif isinstance(value, Mapping | list):
                yield from _references(value)
    elif isinstance(node, list):
        for item in node:
            yield from _references(item)


def _pointer(schema: Mapping[str, Any], reference: str) -> Any:
    """What a local JSON pointer (``#``, ``#/$defs/a``) names; None when it names nothing."""
    if not reference.startswith("#") or (reference != "#" and not reference.startswith("#/")):
        return None
    node: Any = schema
    for raw in reference[2:].split("/") if reference != "#" else []:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _known_draft(schema: dict[str, Any]) -> bool:
    """Whether ``$schema`` names a draft the library knows (an unknown one gives the default,
    whichever it is)."""
    return validator_for(schema, default=Draft202012Validator) is validator_for(
        schema, default=Draft7Validator
    )


def _short(message: str) -> str:
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    return message[: MAX_MESSAGE_CHARS - 1] + "…"
