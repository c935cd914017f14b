"""A monitor's noise rules: what a change must be to be worth a notification.

A change a rule holds back is still recorded, with the rule that held it back; rules decide
only what is notified. They are read once, when the monitor is created or updated, and a bad
one is refused there, naming its field:

* ``ignore_fields``: extracted fields whose changes never count;
* ``ignore_selectors``: CSS selectors whose elements are left out of the page's text before
  it is compared (a clock, a visitor counter, an ad slot);
* ``normalize``: what two texts may differ in and still be the same (whitespace, letter case,
  the way a number is written: ``1,299.00`` and ``1299``);
* ``thresholds``: per numeric field, the smallest change that counts, absolute or relative
  (``{"price": {"relative": 0.01}}``: a price that moved under 1% is noise);
* ``min_text_change``: the smallest share of the page's text lines that must change;
* ``notify_when``: conditions, any of which a changed page must meet to be notified
  (``price < 20``, ``stock becomes "in stock"``, ``title changes``); none: every change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from parsel import Selector
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from scrapejobs_shared.extraction.spec import FIELD_NAME

MAX_RULE_ITEMS = 64
Operator = Literal["<", "<=", ">", ">=", "==", "!=", "becomes", "changes"]
_CONDITION = re.compile(
    r"^\s*(?P<field>[A-Za-z_][A-Za-z0-9_\-]{0,63})\s+"
    r"(?:(?P<op><=|>=|==|!=|<|>|becomes)\s+(?P<value>\S.*?)|(?P<changes>changes))\s*$",
    re.DOTALL,
)


@dataclass(frozen=True, slots=True)
class Condition:
    """``field op value``: a comparison with the current value (numbers compare as
    numbers), ``becomes`` (the value is now this and was not before), or ``changes``."""

    field: str
    op: Operator
    value: float | str | None


def parse_condition(text: str) -> Condition:
    """Read a condition; ``ValueError`` saying what is wrong."""
    match = _CONDITION.match(text)
    if match is None:
        raise ValueError(
            f"{text!r} is not a condition: write 'field < 20', 'field becomes \"in stock\"' "
            "or 'field changes' (operators <, <=, >, >=, ==, !=, becomes, changes)"
        )
    if match["changes"]:
        return Condition(match["field"], "changes", None)
    op: Operator = match["op"]  # type: ignore[assignment]  # the pattern's alternatives
    raw = match["value"].strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return Condition(match["field"], op, raw[1:-1])
    try:
        return Condition(match["field"], op, float(raw))
    except ValueError:
        if op in ("<", "<=", ">", ">="):
            raise ValueError(f"{text!r}: {op} compares with a number, not {raw!r}") from None
        return Condition(match["field"], op, raw)


class NumberThreshold(BaseModel):
    """The smallest change of a numeric field that counts: at least ``absolute`` (in the
    field's unit) and at least ``relative`` (a share of the previous value, 0.05 = 5%)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    absolute: float | None = Field(default=None, ge=0)
    relative: float | None = Field(default=None, ge=0, le=100)

    @model_validator(mode="after")
    def _some_bound(self) -> NumberThreshold:
        if self.absolute is None and self.relative is None:
            raise ValueError("a threshold has 'absolute', 'relative' or both")
        return self


class Normalization(BaseModel):
    """What two values may differ in and still be the same."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    whitespace: bool = Field(default=True, description="Runs of whitespace are one space")
    case: bool = Field(default=False, description="Letter case is ignored")
    numbers: bool = Field(
        default=True, description="Numbers compare by value: '1,299.00' is '1299'"
    )


class MonitorRules(BaseModel):
    """Noise rules: see the module's docstring."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ignore_fields: list[str] = Field(default_factory=list, max_length=MAX_RULE_ITEMS)
    ignore_selectors: list[str] = Field(
        default_factory=list, max_length=MAX_RULE_ITEMS, description="CSS selectors"
    )
    normalize: Normalization = Field(default_factory=Normalization)
    thresholds: dict[str, NumberThreshold] = Field(default_factory=dict, max_length=MAX_RULE_ITEMS)
    min_text_change: float = Field(
        default=0.0,
        ge=0,
        le=1,
        description="The smallest share (0 to 1) of the page's text lines that must change",
    )
    notify_when: list[str] = Field(
        default_factory=list,
        max_length=MAX_RULE_ITEMS,
        description="Conditions, any of which a changed page must meet to be notified, e.g. "
        "'price < 20', 'stock becomes \"in stock\"', 'title changes'",
    )

    @field_validator("ignore_fields")
    @classmethod
    def _field_names(cls, value: list[str]) -> list[str]:
        for name in value:
            _check_field_name(name)
        return value

    @field_validator("thresholds")
    @classmethod
    def _threshold_names(cls, value: dict[str, NumberThreshold]) -> dict[str, NumberThreshold]:
        for name in value:
            _check_field_name(name)
        return value

    @field_validator("ignore_selectors")
    @classmethod
    def _selectors(cls, value: list[str]) -> list[str]:
        probe = Selector(text="<html></html>")
        for css in value:
            if not css.strip() or len(css) > 500:
                raise ValueError(f"{css!r}: a CSS selector of 1 to 500 characters")
            try:
                probe.css(css)
            except Exception as exc:  # cssselect's SelectorError, ExpressionError
                raise ValueError(f"{css!r} is not a CSS selector: {exc}") from None
        return value

    @field_validator("notify_when")
    @classmethod
    def _conditions(cls, value: list[str]) -> list[str]:
        for text in value:
            if len(text) > 500:
                raise ValueError("a condition is at most 500 characters")
            parse_condition(text)
        return value

    def conditions(self) -> list[Condition]:
        return [parse_condition(text) for text in self.notify_when]

    def fields_named(self) -> set[str]:
        """The extracted fields the rules name."""
        named = {*self.ignore_fields, *self.thresholds}
        return named | {condition.field for condition in self.conditions()}


def _check_field_name(name: str) -> None:
    if not FIELD_NAME.match(name):
        raise ValueError(f"invalid field name {name!r}")
