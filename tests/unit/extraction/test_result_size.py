"""Keeping results under the Firestore document limit."""

from __future__ import annotations

import json

from pydantic import JsonValue

from scrapejobs_shared.extraction import (
    TRUNCATION_MARKER,
    FieldSpec,
    extract_page,
    fit_result,
    json_size,
)


def _large_page(target_bytes: int = 2_000_000) -> bytes:
    rows = []
    index = 0
    size = 0
    while size < target_bytes:
        row = (
            f'<div class="row"><a href="/item/{index}">Item {index}: café</a>'
            f'<img src="/img/{index}.png"><p>{"Lorem ipsum dolor sit amet. " * 24}</p></div>\n'
        )
        rows.append(row)
        size += len(row.encode())
        index += 1
    return f"<html><head><title>Big</title></head><body>{''.join(rows)}</body></html>".encode()


def test_a_2mb_page_fits_with_truncated_fields_reported():
    body = _large_page()
    assert len(body) > 2_000_000
    result = extract_page(
        body,
        content_type="text/html; charset=utf-8",
        url="https://big.example/list",
        fields={
            "title": FieldSpec(css="title"),
            "names": FieldSpec(css=".row a", all=True),
        },
        formats=["html", "text", "links", "images", "metadata"],
    )
    data, truncated = fit_result(result.data)
    assert json_size(data) <= 900_000
    assert len(json.dumps(data, ensure_ascii=False).encode()) <= 1_048_576
    assert truncated == ["html", "text"]  # the two largest; the lists fit under the cap
    assert list(data) == list(result.data)  # no field dropped
    assert data["title"] == "Big"
    assert data["metadata"] == result.data["metadata"]
    assert isinstance(data["html"], str) and data["html"].endswith(TRUNCATION_MARKER)
    assert str(result.data["html"]).startswith(data["html"].removesuffix(TRUNCATION_MARKER))
    assert data["links"] == result.data["links"]
    assert data["names"] == result.data["names"]
    assert isinstance(data["text"], str) and data["text"].endswith(TRUNCATION_MARKER)


def test_data_that_fits_is_unchanged():
    data: dict[str, JsonValue] = {"a": "x" * 100, "b": [1, 2], "c": {"d": None}}
    assert fit_result(data) == (data, [])


def test_data_exactly_at_the_budget_fits_and_one_byte_less_cuts():
    data: dict[str, JsonValue] = {"a": "x" * 100, "é": ["ü", 2.5], "c": {"d": None}}
    size = json_size(data)
    assert fit_result(data, max_bytes=size) == (data, [])
    fitted, truncated = fit_result(data, max_bytes=size - 1)
    assert truncated == ["a"] and json_size(fitted) <= size - 1


def test_the_largest_values_are_cut_and_small_ones_kept():
    data: dict[str, JsonValue] = {
        "small": "s" * 50,
        "medium": "m" * 300,
        "big": "b" * 5000,
        "n": 12,
    }
    fitted, truncated = fit_result(data, max_bytes=1000)
    assert json_size(fitted) <= 1000
    assert truncated == ["big"]
    assert fitted["small"] == data["small"] and fitted["medium"] == data["medium"]
    assert fitted["n"] == 12


def test_two_big_values_are_both_kept_in_part():
    data: dict[str, JsonValue] = {"html": "h" * 10_000, "text": "t" * 8_000}
    fitted, truncated = fit_result(data, max_bytes=2_000)
    assert truncated == ["html", "text"]
    assert json_size(fitted) <= 2_000
    assert all(len(str(value)) > 800 for value in fitted.values())


def test_nested_objects_and_lists_are_cut_inside():
    products: list[JsonValue] = [{"name": f"p{i}", "description": "d" * 200} for i in range(100)]
    data: dict[str, JsonValue] = {
        "products": products,
        "meta": {"blob": "z" * 5000, "id": 7},
    }
    fitted, truncated = fit_result(data, max_bytes=3_000)
    assert json_size(fitted) <= 3_000
    assert truncated == ["products", "meta"]
    kept = fitted["products"]
    assert isinstance(kept, list) and kept == products[: len(kept)]
    meta = fitted["meta"]
    assert isinstance(meta, dict) and meta["id"] == 7
    assert str(meta["blob"]).endswith(TRUNCATION_MARKER)


def test_a_list_whose_first_item_is_too_big_keeps_it_shortened():
    fitted, truncated = fit_result({"all": ["q" * 10_000]}, max_bytes=500)
    assert truncated == ["all"]
    assert json_size(fitted) <= 500
    assert str(fitted["all"][0]).endswith(TRUNCATION_MARKER)  # type: ignore[index]


def test_multibyte_and_escaped_strings_are_measured_as_json():
    data = {"text": 'é€😀"\\\n' * 20_000}
    fitted, truncated = fit_result(data, max_bytes=10_000)
    assert truncated == ["text"]
    assert 9_000 < json_size(fitted) <= 10_000


def test_input_is_not_modified():
    data: dict[str, JsonValue] = {"big": "b" * 5000, "nested": {"x": "y" * 5000}}
    snapshot = json.dumps(data)
    fit_result(data, max_bytes=500)
    assert json.dumps(data) == snapshot
