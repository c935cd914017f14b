"""Type conversion of extracted strings."""

from __future__ import annotations

import pytest

from scrapejobs_shared.extraction.conversion import ConversionError, convert_value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1,234", 1234),
        ("  12 ", 12),
        ("-7", -7),
        ("\u22127", -7),
        ("+3", 3),
        ("1 000 000", 1_000_000),
        ("1\u00a0000", 1000),
        ("$1,200", 1200),
        ("1200 €", 1200),
        ("9223372036854775807", 2**63 - 1),
    ],
)
def test_int(text, expected):
    assert convert_value(text, "int") == expected


@pytest.mark.parametrize(
    "text",
    ["12.5", "1.234", "12,34", "1,23,456", "abc", "12 items", "", "-", "9223372036854775808"],
)
def test_int_refusals(text):
    with pytest.raises(ConversionError, match=f"cannot convert {text!r} to int"):
        convert_value(text, "int")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1,234.50", 1234.5),
        ("$12.99", 12.99),
        ("€ 1,200", 1200.0),
        ("-$3.5", -3.5),
        (".5", 0.5),
        ("7", 7.0),
        ("1e3", 1000.0),
        ("12,345.6", 12345.6),
    ],
)
def test_float(text, expected):
    assert convert_value(text, "float") == expected


@pytest.mark.parametrize("text", ["12,99", "nan", "inf", "1e999", "1.2.3", "twelve", "$"])
def test_float_refusals(text):
    with pytest.raises(ConversionError):
        convert_value(text, "float")


@pytest.mark.parametrize(
    ("text", "expected"),
    [("true", True), ("Yes", True), ("ON", True), ("1", True), ("false", False), ("no", False),
     ("off", False), (" 0 ", False)],
)  # fmt: skip
def test_bool(text, expected):
    assert convert_value(text, "bool") is expected


def test_bool_refusal_and_string_passthrough():
    with pytest.raises(ConversionError, match="to bool"):
        convert_value("maybe", "bool")
    assert convert_value(" as is ", "string") == " as is "


def test_long_values_are_shortened_in_messages():
    with pytest.raises(ConversionError) as caught:
        convert_value("x" * 500, "int")
    assert len(str(caught.value)) < 100
