"""What a page used beside its fetch, metered for usage: the pages of a document read (a credit
each beside the page's own, as Firecrawl counts them), the pages read by OCR (their weight,
a setting, each), the screenshots taken, and whether it
came through a proxy (by the proxy's tier); beside any page, the searches a tenant asked and
what their results cost (ports/usage_meter.py). One value
carried from a page's outcome to its task, the commit's totals, the job's tally and the usage
reports; something new to meter is a field here (its name is its stored field's) and, when it
costs credits, a term of ``credits``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields


@dataclass(frozen=True, slots=True)
class Metered:
    document_pages: int = 0  # a document's pages read
    screenshots: int = 0  # screenshots taken and kept
    proxied_basic: int = 0  # pages that came through a basic proxy (options/proxy.py)
    proxied_stealth: int = 0  # pages that came through a stealth proxy
    searches: int = 0  # searches answered (not a page's: ports/usage_meter.py)
    search_credits: int = 0  # what their results cost: a credit a started ten, as Firecrawl
    ocr_pages: int = 0  # a document's pages read by OCR (a scan's, an image's)
    ocr_credits: int = 0  # what they cost beside the page: SCRAPEJOBS_OCR_PAGE_WEIGHT each

    def __add__(self, other: Metered) -> Metered:
        # most pages meter nothing: summing a commit's took 3% of the worker's CPU in the
        # simulation of a million URLs (astuple copies each value)
        if other.empty:
            return self
        if self.empty:
            return other
        return Metered(*(getattr(self, n) + getattr(other, n) for n in FIELD_NAMES))

    @property
    def empty(self) -> bool:
        return not any(getattr(self, n) for n in FIELD_NAMES)

    @property
    def credits(self) -> int:
        """Credits beyond the page's own: what the pages used (``page_credits``) and what
        searches cost."""
        return self.page_credits + self.search_credits

    @property
    def page_credits(self) -> int:
        """What pages used beside their fetch: one a document page read, and the weight of
        each page read by OCR (a screenshot costs none, as on Firecrawl; it is counted)."""
        return self.document_pages + self.ocr_credits

    def proxied(self) -> dict[str, int]:
        """Pages that came through a proxy, by its tier (tiers with none left out)."""
        by_tier = {"basic": self.proxied_basic, "stealth": self.proxied_stealth}
        return {tier: n for tier, n in by_tier.items() if n}

    def to_fields(self) -> dict[str, int]:
        """The nonzero figures, by their stored names."""
        return {name: n for name in FIELD_NAMES if (n := getattr(self, name))}

    @classmethod
    def from_fields(cls, doc: Mapping[str, object]) -> Metered:
        def number(name: str) -> int:
            value = doc.get(name)
            return int(value) if isinstance(value, int | float) else 0

        return cls(**{name: number(name) for name in FIELD_NAMES})


FIELD_NAMES = tuple(field.name for field in fields(Metered))
NOTHING = Metered()
