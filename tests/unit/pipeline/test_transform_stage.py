"""The transform stage: rename (at once), defaults (missing or null), casts."""

from __future__ import annotations

import pytest

from scrapejobs_shared.pipeline import StageRejected, TransformOptions
from scrapejobs_shared.pipeline.transform import transform


def _t(data, **options):
    return transform(data, TransformOptions.model_validate(options))


def test_rename_keeps_order_swaps_and_replaces_an_existing_field() -> None:
    data = {"a": 1, "b": 2, "c": 3}
    assert list(_t(data, rename={"b": "x"}).items()) == [("a", 1), ("x", 2), ("c", 3)]
    assert _t(data, rename={"a": "b", "b": "a"}) == {"b": 1, "a": 2, "c": 3}
    assert _t(data, rename={"a": "c"}) == {"c": 1, "b": 2}
    assert _t(data, rename={"missing": "a"}) == data


def test_defaults_fill_missing_or_null_fields_after_renames() -> None:
    data = {"a": None, "b": 0, "old": None}
    assert _t(data, defaults={"a": "x", "b": 5, "c": [], "new": 1}, rename={"old": "new"}) == {
        "a": "x",
        "b": 0,
        "new": 1,
        "c": [],
    }


@pytest.mark.parametrize(
    ("kind", "value", "expected"),
    [
        ("int", "42", 42),
        ("int", " -7 ", -7),
        ("int", "3.0", 3),
        ("int", 4.0, 4),
        ("int", True, 1),
        ("int", 9, 9),
        ("float", "1.5", 1.5),
        ("float", 2, 2.0),
        ("float", " 1e3 ", 1000.0),
        ("bool", "Yes", True),
        ("bool", " off ", False),
        ("bool", 1, True),
        ("bool", "0", False),
        ("bool", False, False),
        ("str", 12, "12"),
        ("str", 1.5, "1.5"),
        ("str", True, "true"),
        ("str", {"a": [1]}, '{"a":[1]}'),
        ("str", "x", "x"),
        ("int", None, None),
        ("int", ["1", 2], [1, 2]),
    ],
)
def test_casts(kind, value, expected) -> None:
    result = _t({"f": value}, cast={"f": kind})["f"]
    assert result == expected and type(result) is type(expected)


@pytest.mark.parametrize(
    ("kind", "value", "why"),
    [
        ("int", "abc", "not a number"),
        ("int", 1.5, "not a whole number"),
        ("int", "1.5", "not a whole number"),
        ("int", {"a": 1}, "not a number or a string"),
        ("float", "nan", "not a finite number"),
        ("float", "1e999", "not a finite number"),
        ("float", "", "not a number"),
        ("bool", "maybe", "not a boolean"),
        ("bool", 2, "not a boolean"),
    ],
)
def test_a_failed_cast_rejects_the_data_naming_the_field(kind, value, why) -> None:
    with pytest.raises(StageRejected) as caught:
        _t({"f": value}, cast={"f": kind})
    [(where, what)] = caught.value.problems.items()
    assert where == "$.f" and what.startswith("cannot cast ") and why in what
    assert f"to {kind}" in what


def test_list_items_that_fail_are_reported_by_index_and_missing_fields_are_skipped() -> None:
    with pytest.raises(StageRejected) as caught:
        _t({"n": ["1", "x", "y"]}, cast={"n": "int", "absent": "int"})
    assert set(caught.value.problems) == {"$.n[1]", "$.n[2]"}


def test_input_is_not_modified() -> None:
    data = {"a": "1"}
    assert _t(data, rename={"a": "b"}, cast={"b": "int"}) == {"b": 1}
    assert data == {"a": "1"}
