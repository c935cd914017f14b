"""FieldSpec validation happens at construction: bad selectors, regexes and shapes are refused."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from pydantic import ValidationError

from scrapejobs_shared.extraction import FieldSpec, check_field_names, check_format_names
from scrapejobs_shared.extraction.spec import MAX_ITEMS_DEPTH


def _error_text(spec: Mapping[str, object]) -> str:
    with pytest.raises(ValidationError) as caught:
        FieldSpec.model_validate(spec)
    return str(caught.value)


def test_invalid_css_is_rejected_with_its_reason():
    assert "invalid CSS selector" in _error_text({"css": "div[[["})


def test_unknown_css_pseudo_element_is_rejected():
    assert "invalid CSS selector" in _error_text({"css": "a::href"})


def test_invalid_xpath_is_rejected():
    assert "invalid XPath expression" in _error_text({"xpath": "//div[@class="})


def test_invalid_regex_is_rejected():
    assert "invalid regular expression" in _error_text({"css": "p", "re": "(unclosed"})


def test_exactly_one_selector_is_required():
    assert "exactly one of 'css' or 'xpath'" in _error_text({})
    assert "exactly one of 'css' or 'xpath'" in _error_text({"css": "a", "xpath": "//a"})


def test_items_cannot_take_re_or_type():
    spec = {"css": "li", "items": {"name": {"css": "b"}}, "type": "int"}
    assert "'items' cannot be combined" in _error_text(spec)


def test_items_needs_an_element_selector():
    spec = {"css": "li::text", "items": {"name": {"css": "b"}}}
    assert "needs a selector matching elements" in _error_text(spec)


def test_items_nesting_depth_is_bounded():
    spec: dict[str, object] = {"css": "a"}
    for _ in range(MAX_ITEMS_DEPTH):
        spec = {"css": "div", "items": {"inner": spec}}
    FieldSpec.model_validate(spec)  # the limit itself is fine
    assert "nested at most" in _error_text({"css": "div", "items": {"inner": spec}})


def test_nested_field_names_are_checked():
    assert "invalid field name" in _error_text({"css": "li", "items": {"bad name": {"css": "b"}}})


def test_unknown_keys_and_types_are_rejected():
    assert "extra" in _error_text({"css": "a", "selector": "b"}).lower()
    assert "type" in _error_text({"css": "a", "type": "decimal"})


def test_valid_specs_including_parsel_extensions():
    FieldSpec.model_validate({"css": "a::attr(href)", "all": True})
    FieldSpec.model_validate({"xpath": "//a[re:test(@href, '^/p/')]/@href"})
    FieldSpec.model_validate({"xpath": "//div[has-class('product')]"})
    FieldSpec.model_validate({"css": "span.price", "re": r"([\d.,]+)", "type": "float"})


def test_field_names_and_format_clashes():
    fields = {"links": FieldSpec(css="a"), "title": FieldSpec(css="h1")}
    assert check_field_names(fields) is fields
    with pytest.raises(ValueError, match="invalid field name"):
        check_field_names({"1st": FieldSpec(css="a")})
    with pytest.raises(ValueError, match="clash"):
        check_format_names(fields, ["links"])
    check_format_names(fields, ["metadata"])


@pytest.mark.parametrize("default", [{"": True}, {"a": {"__x__": 1}}, [{"ok": 1}, {"": 2}]])
def test_a_default_a_stored_document_cannot_hold_is_refused(default: object) -> None:
    with pytest.raises(ValidationError, match="cannot be stored"):
        FieldSpec.model_validate({"css": "title::text", "default": default})
    assert FieldSpec.model_validate({"css": "t", "default": {"a": [{"b": None}]}}).default
