"""Converting extracted strings to a field's ``type``.

* ``string``: the value as is.
* ``int``: optional sign, digits, optionally grouped in threes by ``,``, ``'``, a space or
  a (narrow) no-break space: ``"1,234"``, ``" 12 "``, ``"-7"``, ``"1 000 000"``. Anything
  with a decimal point is refused (``"12.5"``, and ``"1.234"``, which would be 1234 in
  German but 1.234 in English): extract the integer part with ``re`` if that is what you
  want. Values outside the signed 64-bit range (what Firestore stores) are refused.
* ``float``: the same grouping, an optional ``.`` decimal part and exponent:
  ``"1,234.50"``, ``".5"``, ``"1e3"``. A decimal comma (``"12,5"``) is refused rather than
  guessed. NaN and infinities are refused (JSON cannot carry them).
* ``bool``: ``true/false``, ``yes/no``, ``on/off``, ``1/0`` in any case.

For ``int`` and ``float`` a single currency sign before or after the number is ignored
(``"$12.99"``, ``"12,99 €"`` is still refused for its decimal comma, ``"€ 1,200"`` gives
1200); any other text is an error: use ``re`` to pick the number out.
"""

from __future__ import annotations

import math
import re
import unicodedata

from scrapejobs_shared.errors import WorkFailed

from .spec import ValueType

ConvertedValue = str | int | float | bool

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

_GROUPED = re.compile(r"\d{1,3}(?:([,' \u00a0\u202f\u2019])\d{3})(?:\1\d{3})*")
_PLAIN_INT = re.compile(r"\d+")
_PLAIN_FLOAT = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_FRACTION = re.compile(r"\.\d*(?:[eE][+-]?\d+)?")
_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})
_MINUS_SIGNS = "-\u2212"


class ConversionError(WorkFailed, ValueError):
    """A value that is not a valid ``int``/``float``/``bool``; the message names both."""

    def __init__(self, value: str, value_type: ValueType) -> None:
        shown = value if len(value) <= 60 else value[:57] + "..."
        super().__init__(f"cannot convert {shown!r} to {value_type}")


def convert_value(value: str, value_type: ValueType) -> ConvertedValue:
    """``value`` (already stripped) converted to ``value_type``; raises ConversionError."""
    if value_type == "string":
        return value
    if value_type == "bool":
        return _to_bool(value)
    sign, number = _split_sign(_strip_currency(value.strip()))
    digits = _strip_currency(number)
    parsed = _to_int(digits) if value_type == "int" else _to_float(digits)
    if parsed is None:
        raise ConversionError(value, value_type)
    result = -parsed if sign else parsed
    if isinstance(result, int) and not INT64_MIN <= result <= INT64_MAX:
        raise ConversionError(value, value_type)
    return result


def _to_bool(value: str) -> bool:
    word = value.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ConversionError(value, "bool")


def _strip_currency(text: str) -> str:
    if text and unicodedata.category(text[0]) == "Sc":
        return text[1:].lstrip()
    if text and unicodedata.category(text[-1]) == "Sc":
        return text[:-1].rstrip()
    return text


def _split_sign(text: str) -> tuple[bool, str]:
    if text and text[0] in _MINUS_SIGNS:
        return True, text[1:]
    if text.startswith("+"):
        return False, text[1:]
    return False, text


def _ungrouped(digits: str) -> str | None:
    """The integer digits without thousands separators, ``None`` when not a digit run."""
    if _PLAIN_INT.fullmatch(digits):
        return digits
    grouped = _GROUPED.fullmatch(digits)
    if grouped is None:
        return None
    return digits.replace(grouped.group(1), "")


def _to_int(digits: str) -> int | None:
    ungrouped = _ungrouped(digits)
    return int(ungrouped) if ungrouped is not None else None


def _to_float(digits: str) -> float | None:
    if _PLAIN_FLOAT.fullmatch(digits):
        number = digits
    else:
        fraction = _FRACTION.search(digits)
        integer_part = digits[: fraction.start()] if fraction else digits
        ungrouped = _ungrouped(integer_part)
        if ungrouped is None or (fraction is not None and fraction.end() != len(digits)):
            return None
        number = ungrouped + (fraction.group(0) if fraction else "")
    result = float(number)
    return result if math.isfinite(result) else None
