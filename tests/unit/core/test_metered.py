"""What a page used beside its fetch, summed and stored by name."""

from __future__ import annotations

from scrapejobs_shared.domain.job_tally import JobTally
from scrapejobs_shared.domain.metered import FIELD_NAMES, NOTHING, Metered
from scrapejobs_shared.domain.outcome_stats import Totals


def test_metered_figures_add_and_only_document_pages_cost_credits() -> None:
    total = Metered(document_pages=3) + Metered(document_pages=1, screenshots=2) + NOTHING
    assert total == Metered(document_pages=4, screenshots=2)
    assert total.credits == 4 and not total.empty and NOTHING.empty
    assert NOTHING + Metered(ocr_pages=2) == Metered(ocr_pages=2) == Metered(ocr_pages=2) + NOTHING
    assert NOTHING + NOTHING == NOTHING and (NOTHING + NOTHING).empty


def test_metered_figures_are_stored_by_name_and_read_back() -> None:
    metered = Metered(document_pages=7, screenshots=1)
    assert metered.to_fields() == {"document_pages": 7, "screenshots": 1}
    assert Metered(screenshots=1).to_fields() == {"screenshots": 1}  # zeros are not written
    assert Metered.from_fields(metered.to_fields() | {"other": 3}) == metered
    assert Metered.from_fields({"document_pages": "x"}) == NOTHING
    # stored names: never renamed
    assert FIELD_NAMES == (
        "document_pages",
        "screenshots",
        "proxied_basic",
        "proxied_stealth",
        "searches",
        "search_credits",
        "ocr_pages",
        "ocr_credits",
    )
    proxied = Metered(proxied_basic=2) + Metered(proxied_stealth=1)
    assert proxied.to_fields() == {"proxied_basic": 2, "proxied_stealth": 1}
    assert proxied.credits == 0  # counted, not charged
    assert proxied.proxied() == {"basic": 2, "stealth": 1} and NOTHING.proxied() == {}
    searched = Metered(searches=2, search_credits=3)  # beside any page: what a search cost
    assert Metered.from_fields(searched.to_fields()) == searched and searched.credits == 3
    scanned = Metered(document_pages=4, ocr_pages=4, ocr_credits=8)  # a weight of 2 a page
    assert Metered.from_fields(scanned.to_fields()) == scanned
    assert scanned.page_credits == 12 and scanned.credits == 12


def test_a_job_s_tally_and_totals_carry_them() -> None:
    tally = JobTally(uncharged=1, metered=Metered(screenshots=2))
    assert JobTally.from_fields(tally.to_fields()) == tally
    assert not JobTally(metered=Metered(screenshots=1)).empty
    totals = Totals(metered=Metered(document_pages=5, screenshots=3))
    assert Totals.from_fields(totals.to_fields()).metered == totals.metered
    assert totals.credits == 5  # no page fetched here: its document pages only
