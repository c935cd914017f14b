"""The clean stage: unescape, collapse, trim, drop empty values, recursively."""

from __future__ import annotations

from scrapejobs_shared.pipeline import CleanOptions
from scrapejobs_shared.pipeline.clean import clean


def test_defaults_unescape_collapse_trim_and_drop_empty_recursively() -> None:
    data = {
        "title": "  Fish &amp; Chips\n\t for&nbsp;two  ",
        "blank": "   ",
        "none": None,
        "tags": [" a ", "", "&lt;b&gt;", None, []],
        "nested": {"x": " y ", "empty": {"deeper": ["  "]}},
        "zero": 0,
        "no": False,
        "price": 1.5,
    }

    assert clean(data, CleanOptions()) == {
        "title": "Fish & Chips for two",
        "tags": ["a", "<b>"],
        "nested": {"x": "y"},
        "zero": 0,
        "no": False,
        "price": 1.5,
    }


def test_each_step_can_be_switched_off() -> None:
    data = {"t": "  a &amp;\n b  ", "e": ""}
    assert clean(data, CleanOptions(unescape_html=False)) == {"t": "a &amp; b"}
    assert clean(data, CleanOptions(collapse_whitespace=False)) == {"t": "a &\n b"}
    assert clean(data, CleanOptions(trim=False)) == {"t": " a & b "}
    assert clean(data, CleanOptions(drop_empty=False)) == {"t": "a & b", "e": ""}


def test_html_is_skipped_by_default_and_fields_choose_what_is_cleaned() -> None:
    data = {"html": "<p>  a &amp; b </p>", "a": " x ", "b": " y "}
    assert clean(data, CleanOptions()) == {"html": "<p>  a &amp; b </p>", "a": "x", "b": "y"}
    assert clean(data, CleanOptions(fields=["a"])) == {**data, "a": "x"}
    assert clean(data, CleanOptions(skip=[]))["html"] == "<p> a & b </p>"


def test_input_is_not_modified() -> None:
    data = {"t": [" a "], "e": ""}
    clean(data, CleanOptions())
    assert data == {"t": [" a "], "e": ""}
