"""What a job asks to extract: field specs, validated and compiled at submit time.

Every selector and regex is checked when the model is built (an invalid one is a pydantic
``ValidationError`` naming the problem), so a job never fails later on its own spec.
How a spec is applied to a page is documented on :class:`FieldSpec` and in
:mod:`.field_evaluation`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from parsel import Selector
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    field_validator,
    model_validator,
)
from pydantic.config import JsonDict

from scrapejobs_shared.extraction.user_regex import UnsupportedRegex, check_syntax

from .formats import FormatChoice, format_name
from .selection import SelectionError, check_xpath

ValueType = Literal["string", "int", "float", "bool"]

FIELD_NAME = re.compile(r"^(?!__)[A-Za-z_][A-Za-z0-9_\-]{0,63}$")  # '__' is reserved
MAX_FIELDS = 100
MAX_ITEMS_DEPTH = 5  # levels of ``items`` inside ``items``
_PSEUDO_ELEMENT = re.compile(r"::\s*(?:text|attr\s*\()")
_PROBE = Selector(text="<html><body></body></html>")


# what check_field_names enforces, for the OpenAPI document
ONLY_FIELD_NAMES: JsonDict = {"propertyNames": {"pattern": FIELD_NAME.pattern}}


class FieldSpec(BaseModel):
    """One extracted field: exactly one of ``css`` or ``xpath``.

    * The first match gives the value (``default`` when nothing matches); with ``all``
      the value is the list of every match: ``[]`` when nothing matches, or ``default``
      when it is not null.
    * A selector matching elements reads as the element's visible text (whitespace
      normalised); ``::text``, ``::attr(x)``, ``text()`` and ``@x`` give the string as
      selected, stripped; URL attributes (``href``, ``src``...) are made absolute.
    * ``re`` runs on each match (first occurrence): the value is the first group that
      took part in the match, or the whole match when the pattern has no groups. Matches
      it does not match are dropped.
    * ``type`` converts each value; a failure is reported in the page's ``errors`` and the
      value becomes ``default`` (in a list, the failing value is left out).
    * ``items`` makes the value a list of objects, one per element matched, each holding
      the nested fields evaluated relative to that element (``all`` does not apply).
      Nested CSS is relative (and may match the container itself, as in parsel); nested
      XPath is relative when written so (``.//a``, ``a/@href``): a leading ``//`` searches
      the whole document, per XPath.
    """

    model_config = ConfigDict(
        extra="forbid",
        strict=True,  # 0 is not false, "5" is not 5
        # what _one_selector enforces, said in the OpenAPI document
        json_schema_extra={
            "oneOf": [
                {"required": [name], "properties": {name: {"type": "string"}}}
                for name in ("css", "xpath")
            ],
            "if": {"required": ["items"], "properties": {"items": {"type": "object"}}},
            "then": {"properties": {"re": {"type": "null"}, "type": {"type": "null"}}},
        },
    )

    css: str | None = Field(default=None, max_length=2000, description="CSS selector (parsel)")
    xpath: str | None = Field(default=None, max_length=2000, description="XPath 1.0 expression")
    all: bool = Field(default=False, description="List of every match instead of the first")
    default: JsonValue = Field(default=None, description="Value when nothing matches")
    re: str | None = Field(
        default=None,
        max_length=1000,
        description=(
            "Regex applied to each match (first group if any); RE2 syntax: no "
            "backreferences or lookaround"
        ),
    )
    type: ValueType | None = Field(default=None, description="Convert each value to this type")
    items: dict[str, FieldSpec] | None = Field(
        default=None,
        max_length=MAX_FIELDS,
        json_schema_extra=ONLY_FIELD_NAMES,
        description="Nested fields evaluated inside each match: gives a list of objects",
    )

    @model_validator(mode="after")
    def _one_selector(self) -> FieldSpec:
        if (self.css is None) == (self.xpath is None):
            raise ValueError("exactly one of 'css' or 'xpath' is required")
        if self.items is not None:
            if self.re is not None or self.type is not None:
                raise ValueError("'items' cannot be combined with 're' or 'type'")
            if self.css is not None and _PSEUDO_ELEMENT.search(self.css):
                raise ValueError("'items' needs a selector matching elements, not ::text/::attr")
            if items_depth(self) > MAX_ITEMS_DEPTH:
                raise ValueError(f"'items' can be nested at most {MAX_ITEMS_DEPTH} levels deep")
        return self

    @field_validator("css")
    @classmethod
    def _css_compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                _PROBE.css(value)
            except Exception as exc:  # cssselect raises several error types
                raise ValueError(f"invalid CSS selector: {exc}") from None
        return value

    @field_validator("xpath")
    @classmethod
    def _xpath_compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                check_xpath(value)  # compiled only: an expression is never run at submit
            except SelectionError as exc:
                raise ValueError(f"invalid XPath expression: {exc.reason}") from None
        return value

    @field_validator("default")
    @classmethod
    def _default_storable(cls, value: JsonValue) -> JsonValue:
        check_map_keys(value)
        return value

    @field_validator("re")
    @classmethod
    def _regex_compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                check_syntax(value)  # compiled within its budget by the submission's rules
            except UnsupportedRegex as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("items")
    @classmethod
    def _item_names(cls, value: dict[str, FieldSpec] | None) -> dict[str, FieldSpec] | None:
        if value is not None:
            check_field_names(value)
        return value


def check_map_keys(value: JsonValue, at: str = "") -> None:
    """``ValueError`` when an object inside ``value`` has a key a stored document cannot hold
    (empty, or ``__name__``-like: reserved by Firestore)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            if not key or (key.startswith("__") and key.endswith("__")):
                raise ValueError(
                    f"object key {key!r}{at and f' at {at}'} cannot be stored: keys must be "
                    "non-empty and not of the form __name__"
                )
            check_map_keys(inner, f"{at}.{key}" if at else key)
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            check_map_keys(inner, f"{at}[{index}]")


def items_depth(spec: FieldSpec) -> int:
    """How many levels of ``items`` a spec holds (0 for a plain field)."""
    if spec.items is None:
        return 0
    return 1 + max((items_depth(child) for child in spec.items.values()), default=0)


def check_field_names(fields: dict[str, FieldSpec]) -> dict[str, FieldSpec]:
    if len(fields) > MAX_FIELDS:
        raise ValueError(f"at most {MAX_FIELDS} fields")
    for name in fields:
        if not FIELD_NAME.match(name):
            raise ValueError(
                f"invalid field name {name!r}: use letters, digits, '_' or '-' "
                "(not starting with '__')"
            )
    return fields


def check_format_names(fields: dict[str, FieldSpec], formats: Iterable[FormatChoice]) -> None:
    """Reject top-level field names that a requested format's result would overwrite.

    Formats are stored in the same ``data`` object under their own names (and JSON
    content under ``json``); at extraction time the format wins and the field gets an
    error, so a job model can call this at submit time to refuse the clash up front.
    """
    taken = {*map(format_name, formats), "json"}
    clashes = sorted(name for name in fields if name in taken)
    if clashes:
        raise ValueError(f"field names {clashes} clash with formats or 'json': rename them")


Fields = dict[str, FieldSpec]
