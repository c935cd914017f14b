"""Typed field diffs, a line diff of the text, and the noise rules deciding what is told."""

from __future__ import annotations

import difflib
from typing import Any

import pytest

from scrapejobs_shared.adapters.budgeted_processes import BudgetedProcesses
from scrapejobs_shared.domain.monitor_rules import MonitorRules
from scrapejobs_shared.domain.page_diff import (
    MAX_DIFF_CHARS,
    PageContent,
    as_number,
    compare,
    unequal,
)
from scrapejobs_shared.ports.budgeted_work import Budget

TEXT = "# Product 7\n\nA fine product.\n\nPrice: 10.50\n\nIn stock\n"


def rules(**given: Any) -> MonitorRules:
    return MonitorRules.model_validate(given)


def page(markdown: str = TEXT, **data: Any) -> PageContent:
    return PageContent(data, markdown)


def test_an_unchanged_page_is_the_same() -> None:
    before = page(price=10.5, title="Product 7", tags=["a", "b"])
    assert compare(before, before, rules()).status == "same"
    assert compare(before, before, rules()).notify is False


def test_a_number_says_how_far_it_moved_and_a_list_what_it_gained_and_lost() -> None:
    diff = compare(
        page(price=10.50, tags=["new", "sale"]),
        page(TEXT.replace("10.50", "9.99"), price=9.99, tags=["sale", "last items"]),
        rules(),
    )
    assert diff.status == "changed" and diff.notify
    price = diff.fields["price"]
    assert (price.previous, price.current, price.change) == (10.5, 9.99, -0.51)
    assert price.change_pct == pytest.approx(-4.8571, abs=1e-3)
    tags = diff.fields["tags"]
    assert tags.added == ["last items"] and tags.removed == ["new"]
    assert "-Price: 10.50" in diff.text and "+Price: 9.99" in diff.text
    assert diff.to_dict()["fields"]["price"] == {
        "previous": 10.5,
        "current": 9.99,
        "change": -0.51,
        "change_pct": price.change_pct,
    }


def test_a_field_that_appears_or_goes_is_a_change() -> None:
    diff = compare(page(price=10.5), page(price=10.5, stock="in stock"), rules())
    assert diff.fields["stock"].previous is None and diff.fields["stock"].current == "in stock"


@pytest.mark.parametrize(
    ("before", "after", "how"),
    [
        ("  In   stock ", "In stock", {}),
        ("1,299.00", "1299", {}),
        ("$ 10.50", "10.5", {}),
        ("1.299,00 €", "1299", {}),
        ("In Stock", "in stock", {"case": True}),
    ],
)
def test_what_normalization_hides_is_no_change(
    before: str, after: str, how: dict[str, bool]
) -> None:
    diff = compare(page(value=before), page(value=after), rules(normalize=how))
    assert diff.status == "same"


def test_letter_case_counts_unless_told_otherwise() -> None:
    assert compare(page(v="In Stock"), page(v="in stock"), rules()).status == "changed"


@pytest.mark.parametrize(
    ("text", "number"),
    [("10,50", 10.5), ("1,299", 1299.0), ("1 299,99", 1299.99), ("-3", -3.0), ("abc", None)],
)
def test_numbers_are_read_as_written(text: str, number: float | None) -> None:
    assert as_number(text) == number


def test_a_change_held_back_is_recorded_with_its_rule() -> None:
    noise = rules(
        ignore_fields=["visitors"],
        thresholds={"price": {"relative": 0.01}, "stock": {"absolute": 5}},
    )
    diff = compare(
        page(price=100.0, stock=40, visitors=10),
        page(price=100.5, stock=43, visitors=11),
        noise,
    )
    assert diff.status == "changed" and not diff.notify
    assert diff.fields["visitors"].held_back_by == "ignore_fields"
    assert diff.fields["price"].held_back_by == "thresholds.price.relative"
    assert diff.fields["stock"].held_back_by == "thresholds.stock.absolute"
    assert set(diff.held_back_by) == {
        "ignore_fields",
        "thresholds.price.relative",
        "thresholds.stock.absolute",
    }
    big = compare(page(price=100.0), page(price=90.0), noise)
    assert big.notify and big.fields["price"].held_back_by is None


def test_a_small_share_of_the_text_is_held_back() -> None:
    long = "\n".join(f"line {n}" for n in range(100))
    edited = long.replace("line 50", "line fifty")
    small = compare(page(long), page(edited), rules(min_text_change=0.05))
    assert small.status == "changed" and not small.notify
    assert small.text_held_back_by == "min_text_change" and 0 < small.text_change < 0.05
    assert compare(page(long), page(edited), rules()).notify


@pytest.mark.parametrize(
    ("conditions", "before", "after", "told"),
    [
        (["price < 20"], {"price": 25.0}, {"price": 19.0}, True),
        (["price < 20"], {"price": 25.0}, {"price": 21.0}, False),
        (['stock becomes "in stock"'], {"stock": "sold out"}, {"stock": "in  stock"}, True),
        (['stock becomes "in stock"'], {"stock": "in stock"}, {"stock": "in stock "}, False),
        (["title changes"], {"title": "A", "price": 1.0}, {"title": "A", "price": 2.0}, False),
        (["title changes", "price >= 2"], {"price": 1.0}, {"price": 2.0}, True),
        (["price != 3"], {"price": 1.0}, {"price": 2.0}, True),
    ],
)
def test_notify_when_conditions(
    conditions: list[str], before: dict[str, Any], after: dict[str, Any], told: bool
) -> None:
    diff = compare(page(**before), page(**after), rules(notify_when=conditions))
    assert diff.notify is told
    if diff.status == "changed" and not told:
        assert "notify_when" in diff.held_back_by


def test_the_text_diff_is_a_unified_diff_with_a_line_of_context() -> None:
    before = "\n".join(f"line {n}" for n in range(20))
    after = before.replace("line 3", "line three").replace("line 15\n", "")
    diff = compare(page(before), page(after), rules())
    expected = difflib.unified_diff(
        before.splitlines(), after.splitlines(), "previous", "current", lineterm="", n=1
    )
    assert diff.text == "\n".join(expected)
    assert diff.text_change == pytest.approx(1 - 2 * 18 / 39)


async def test_a_page_of_lines_from_few_values_compares_within_its_budget() -> None:
    """The review's page: two versions of 5,000 lines drawn from three values (difflib's
    matcher without its junk heuristic took 20 s for 1,300 of them); compared in a process
    of its own within two seconds of CPU."""
    lines = [str(n % 3) for n in range(5000)]
    before, after = page("\n".join(lines)), page("\n".join(reversed(lines)))
    work = BudgetedProcesses(1)
    try:
        diff = await work.run(Budget("page comparison", "X", 2.0), compare, before, after, rules())
    finally:
        await work.close()
    assert diff.status == "changed" and 0 < diff.text_change < 1
    assert diff.text.startswith("--- previous\n+++ current\n@@ ")


def test_a_diff_is_cut_at_its_size() -> None:
    before = "\n".join(f"{n} " + "x" * 500 for n in range(1000))
    after = "\n".join(f"{n} " + "y" * 500 for n in range(1000))
    diff = compare(page(before), page(after), rules())
    assert len(diff.text) <= MAX_DIFF_CHARS and diff.text_change == 1.0


def test_pages_not_compared_are_changed_unless_equal_and_say_why() -> None:
    assert unequal(page(price=1), page(price=1), "budget").status == "same"
    diff = unequal(page(price=1), page(price=2), "the page comparison used more than 10 s")
    assert diff.status == "changed" and diff.notify and diff.text == ""
    assert diff.to_dict()["not_compared"] == "the page comparison used more than 10 s"
