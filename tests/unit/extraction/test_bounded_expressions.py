"""Users' regular expressions and XPath: linear-time matching (RE2), compile-only at submit, and
a clear refusal of what RE2 cannot take. The catastrophic cases would run for hours on Python's
``re``; each test has a short timeout, so a return to backtracking fails loudly."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from scrapejobs_shared.domain.crawl_spec import CrawlSpec
from scrapejobs_shared.extraction import FieldSpec, extract_page
from scrapejobs_shared.extraction.user_regex import (
    CostlyRegex,
    UnsupportedRegex,
    check_syntax,
    compile_within_budget,
    user_regex,
)
from scrapejobs_shared.pipeline.failure import StageRejected
from scrapejobs_shared.pipeline.validate import check_schema, validate

pytestmark = pytest.mark.timeout(20)

EVIL = r"(a+)+$"
EVIL_ANY = r"([\s\S]|[\s\S])*\x00"
PAGE = f"<html><body><p class=v>{'a' * 40}!</p><a href='/p/1'>one</a></body></html>"


def _extract(fields: dict[str, Any]) -> Any:
    specs = {name: FieldSpec.model_validate(spec) for name, spec in fields.items()}
    return extract_page(
        PAGE.encode(), content_type="text/html", url="https://example.com/", fields=specs
    )


def test_catastrophic_patterns_finish_on_page_text() -> None:
    result = _extract(
        {
            "evil": {"css": "p.v", "re": EVIL},
            "any": {"css": "p.v", "re": EVIL_ANY},
            "ok": {"css": "p.v", "re": r"(a{3})"},
        }
    )
    assert result.data == {"evil": None, "any": None, "ok": "aaa"}


def test_exslt_regex_functions_run_on_re2() -> None:
    result = _extract(
        {
            "evil": {"xpath": f"boolean(//p[re:test(., '{EVIL}')])", "type": "bool"},
            "literal": {"xpath": f"re:test('{'a' * 24}!', '{EVIL}')", "type": "bool"},
            "match": {"xpath": "re:match(string(//a/@href), '/p/([0-9]+)')", "all": True},
            "every": {"xpath": "re:match('a1 b2', '[a-z][0-9]', 'g')", "all": True},
            "replace": {"xpath": "re:replace('A-B-C', '-', 'g', '+')"},
            "first": {"xpath": "re:replace('A-B-C', '-', '', '+')"},
            "case": {"xpath": "re:test('ABC', 'b', 'i')", "type": "bool"},
        }
    )
    assert result.data == {
        "evil": False,
        "literal": False,
        "match": ["/p/1", "1"],
        "every": ["a1", "b2"],
        "replace": "A+B+C",
        "first": "A+B-C",
        "case": True,
    }


def test_a_pattern_re2_cannot_take_fails_only_its_field_at_run_time() -> None:
    # a computed pattern cannot be checked at submit: the field fails with the reason
    result = _extract({"bad": {"xpath": "re:test('x', concat('(a)', '\\1'))", "type": "bool"}})
    assert "invalid regular expression" in result.errors["bad"]


def test_submission_compiles_xpath_without_running_it() -> None:
    # the literal would hang Python's re for hours if the XPath were evaluated at submit
    FieldSpec.model_validate({"xpath": f"//a[re:test('{'a' * 24}!', '{EVIL}')]"})
    FieldSpec.model_validate({"xpath": "//*[count(//*[count(//*)>0])>0]"})


@pytest.mark.parametrize(
    "pattern",
    [r"(a)\1", r"(?=a)b", r"(?<!x)y", r"(?P<n>a)(?P=n)", r"a++", "[unclosed"],
)
def test_patterns_re2_cannot_take_are_refused_naming_why(pattern: str) -> None:
    with pytest.raises(ValidationError, match="invalid regular expression") as caught:
        FieldSpec.model_validate({"css": "p", "re": pattern})
    assert "RE2 syntax" in str(caught.value)
    with pytest.raises(ValidationError, match="is not a valid regex"):
        CrawlSpec.model_validate({"start_url": "https://example.com/", "include": [pattern]})
    with pytest.raises(
        ValueError, match=r"invalid JSON Schema at \['properties'\]\['x'\]\['pattern'\]"
    ):
        check_schema({"properties": {"x": {"pattern": pattern}}})


def test_lone_surrogates_in_a_pattern_are_refused() -> None:
    with pytest.raises(UnsupportedRegex, match="not valid Unicode"):
        user_regex("I\ud9b1\udeab")


def test_json_schema_patterns_run_on_re2() -> None:
    schema = {
        "type": "object",
        "properties": {"x": {"pattern": EVIL}},
        "patternProperties": {EVIL: {"type": "string"}},
        "additionalProperties": False,
    }
    check_schema(schema)
    with pytest.raises(StageRejected) as caught:
        validate(schema, {"x": "a" * 40 + "!", "a" * 40 + "!": 1})
    assert set(caught.value.problems) == {"$", "$.x"}
    validate(schema, {"x": "aaa", "aaa": "fine"})


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#"},
        {"allOf": [{"$ref": "#"}]},
        {"type": "object", "$ref": "#"},
        {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"anyOf": [{"$ref": "#/$defs/a"}]}},
         "$ref": "#/$defs/a"},
    ],
)  # fmt: skip
def test_a_reference_to_itself_is_refused(schema: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="resolves to itself"):
        check_schema(schema)


def test_recursive_schemas_that_descend_are_accepted() -> None:
    tree = {
        "$defs": {"node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/node"}}}},
        "$ref": "#/$defs/node",
    }
    check_schema(tree)
    validate(tree, {"child": {"child": {}}})


COSTLY = r"\pL{400}"  # ~0.3 s and ~10 MB to compile under RE2's default budget


def test_validating_a_costly_pattern_does_not_compile_it() -> None:
    """Request validation (and the worker's decoding of a stored job) checks syntax only:
    under a few ms however costly the pattern (its cost is the submission's rules' to find)."""
    import time

    fields = {f"f{n}": {"css": "p", "re": COSTLY + "x" * n} for n in range(12)}
    started = time.process_time()
    for spec in fields.values():
        FieldSpec.model_validate(spec)
    CrawlSpec.model_validate({"start_url": "https://example.com/", "include": [COSTLY]})
    assert time.process_time() - started < 0.1  # twelve real compiles: ~3.6 s
    with pytest.raises(UnsupportedRegex, match="RE2 syntax"):
        check_syntax(r"(a)\1")


def test_a_pattern_over_its_memory_budget_is_refused_clearly() -> None:
    with pytest.raises(CostlyRegex, match="KiB of memory"):
        compile_within_budget(COSTLY)
    with pytest.raises(CostlyRegex):
        user_regex(COSTLY)  # where pages are extracted: the field fails with the reason
    assert user_regex(r"\p{L}+").search("été") is not None  # Unicode classes still work
    with pytest.raises(UnsupportedRegex, match="at most 1000 characters"):
        check_syntax("a" * 1001)


def test_the_compiled_cache_is_bounded_and_the_bindings_is_stepped_around() -> None:
    import re2  # type: ignore[import-untyped]

    from scrapejobs_shared.extraction import user_regex as module

    re2._Regexp._make.cache_clear()  # the binding's own lru_cache (re2_internals.py)
    for n in range(module.CACHED_PATTERNS + 10):
        user_regex(f"x{n}y+")
    assert len(module._cache) == module.CACHED_PATTERNS
    assert re2._Regexp._make.cache_info().currsize == 0  # nothing kept by the binding
    assert user_regex("x1y+") is user_regex("x1y+")  # kept while used
