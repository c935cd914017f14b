"""What a page says of itself, read once from the whole document before its main content is cut
out: its kind (:mod:`.page_kind`), its title (Open Graph's ``og:title``, else ``<title>``), and
the facts a reader needs that schema.org data declares (JSON-LD, microdata or RDFa):

* a ``Product``: its price (an ``Offer``'s price and currency, an ``AggregateOffer``'s lowest
  and highest), its availability, its SKU;
* a ``JobPosting``: the hiring organisation, where the job is, the salary, the employment type;
* an ``Event`` (and its subtypes): when it starts and ends, where (the place's name and town),
  and its price.

:func:`.head.headed` then lists those the chosen content does not show already (a price
rendered by a script, a job's overview in a sidebar, which is chrome); a product's options come
from its add-to-cart form (:mod:`.variants`). Reading is
bounded: at most ``MAX_SCRIPTS`` JSON-LD scripts of ``MAX_SCRIPT_CHARS`` each, nesting and
lists walked to a fixed depth and length.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from lxml import etree  # type: ignore[import-untyped]

from .fact import Fact, Shown
from .page_kind import PageKind, page_kind
from .variants import variant_fact

MAX_SCRIPTS = 20
MAX_SCRIPT_CHARS = 200_000
MAX_DEPTH = 8
MAX_ITEMS = 50  # of a list (a @graph, several offers)
MAX_VALUE = 200  # characters of a microdata or RDFa property's text read

PRODUCT = "Product"
JOB = "JobPosting"
EVENT = "Event"
# schema.org's Event subtypes a page may name instead (https://schema.org/Event).
EVENT_TYPES = frozenset(
    {"Event", "BusinessEvent", "ChildrensEvent", "ComedyEvent", "CourseInstance"}
    | {"DanceEvent", "DeliveryEvent", "EducationEvent", "ExhibitionEvent", "Festival"}
    | {"FoodEvent", "Hackathon", "LiteraryEvent", "MusicEvent", "PublicationEvent"}
    | {"SaleEvent", "ScreeningEvent", "SocialEvent", "SportsEvent", "TheaterEvent"}
    | {"VisualArtsEvent"}
)
_TYPE_NAME = re.compile(r"(?:https?://schema\.org/|schema:)?([A-Za-z]+)$")


@dataclass(frozen=True, slots=True)
class Declared:
    """What a page says of itself (see the module's docstring)."""

    kind: PageKind = PageKind.OTHER
    title: str = ""
    facts: tuple[Fact, ...] = field(default=())


UNDECLARED = Declared()

# Microdata's and RDFa's item types (smart strings: each knows its element). Looking for the
# attributes costs half of looking for the elements that have them.
_ITEM_TYPES = etree.XPath("//@itemtype | //@typeof")


def declared(root: Any, url: str) -> Declared:
    """What ``root`` (a whole page, before its scripts are stripped), found at ``url``, says
    of itself: one walk of its scripts, titles and metas, one look for typed items."""
    scripts: list[str] = []
    title = og_title = og_type = ""
    for element in root.iter("script", "title", "meta"):
        tag = element.tag
        if tag == "script":
            if (element.get("type") or "").strip().lower() == "application/ld+json":
                scripts.append(element.text or "")
        elif tag == "title":
            title = title or " ".join("".join(element.itertext()).split())
        else:
            name = element.get("property") or element.get("name")
            if name == "og:title" and not og_title:
                og_title = " ".join((element.get("content") or "").split())
            elif name == "og:type" and not og_type:
                og_type = (element.get("content") or "").strip()
    items = list(dict.fromkeys(value.getparent() for value in _ITEM_TYPES(root)))
    types = [_item_type(element) for element in items]
    kind = page_kind([*types, *(text.strip() for text in scripts), og_type], url)
    found = _json_ld_items(scripts) + [
        _markup_item(element, 0)
        for element, declared_type in zip(items, types, strict=True)
        if _type_name(declared_type) in _READ
    ]
    facts = _facts(found)
    if kind is PageKind.PRODUCT or any(f.label == "Price" for f in facts):
        variants = variant_fact(root)
        if variants is not None:
            facts.append(variants)
    return Declared(kind, og_title or title, tuple(facts))


def _item_type(element: Any) -> str:
    """What a microdata or RDFa item says it is (its last type)."""
    names = (element.get("itemtype") or element.get("typeof") or "").split()
    return names[-1] if names else ""


def _facts(items: list[dict[str, Any]]) -> list[Fact]:
    """The facts of the one product, job or event among the page's ``items`` (none when it
    declares several of a kind: a listing's cards)."""
    for wanted in (PRODUCT, JOB, EVENT):
        of_kind = [item for item in items if _is(item, wanted)]
        if len({_text(item.get("name") or item.get("title")) for item in of_kind}) == 1:
            facts: list[Fact] = []
            for item in of_kind:  # JSON-LD and microdata may each say part
                facts += [
                    f for f in _FACTS[wanted](item) if f.label not in {g.label for g in facts}
                ]
            return facts
    return []


def _is(item: dict[str, Any], wanted: str) -> bool:
    names = {_type_name(t) for t in _listed(item.get("@type"))}
    return bool(names & EVENT_TYPES) if wanted == EVENT else wanted in names


def _type_name(value: object) -> str:
    match = _TYPE_NAME.search(str(value).strip()) if isinstance(value, str) else None
    return match.group(1) if match else ""


def _json_ld_items(scripts: list[str]) -> list[dict[str, Any]]:
    """The objects of the page's JSON-LD ``scripts`` (``@graph`` members and list entries
    included)."""
    found: list[dict[str, Any]] = []
    for text in scripts[:MAX_SCRIPTS]:
        if not text or len(text) > MAX_SCRIPT_CHARS or not any(n in text for n in _READ_HINTS):
            continue  # (a site's Organization and WebSite graph is not parsed for nothing)
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            continue
        for entry in _listed(data):
            if isinstance(entry, dict):
                found.extend(e for e in _listed(entry.get("@graph")) if isinstance(e, dict))
                found.append(entry)
    return found


def _markup_item(element: Any, depth: int) -> dict[str, Any]:
    item: dict[str, Any] = {"@type": _item_type(element)}
    pending = list(element)
    pending.reverse()
    while pending:  # depth first, in document order, not into nested items
        child = pending.pop()
        if not isinstance(child.tag, str):
            continue
        name = child.get("itemprop") or child.get("property")
        nested = child.get("itemscope") is not None or child.get("typeof") is not None
        if name:
            name = name.split()[0].rsplit("/", 1)[-1].removeprefix("schema:")
        if name in _PROPERTIES:
            if nested and depth < MAX_DEPTH:
                value: Any = _markup_item(child, depth + 1)
            else:
                value = _markup_value(child)
            if name not in item:
                item[name] = value
            elif isinstance(item[name], list):
                if len(item[name]) < MAX_ITEMS:
                    item[name].append(value)
            else:
                item[name] = [item[name], value]
        if not nested:
            pending.extend(reversed(child))
    return item


def _markup_value(element: Any) -> str:
    for attribute in ("content", "href", "datetime", "value"):
        value = element.get(attribute)
        if value is not None:
            return str(value).strip()
    text: list[str] = []
    size = 0
    for piece in element.itertext():  # a value's first MAX_VALUE characters
        text.append(piece)
        size += len(piece)
        if size >= MAX_VALUE:
            break
    return " ".join("".join(text)[:MAX_VALUE].split())


def _listed(value: object) -> list[Any]:
    if isinstance(value, list):
        return value[:MAX_ITEMS]
    return [] if value is None else [value]


def _text(value: object) -> str:
    """A scalar property's text (a ``name`` of an object, the first of a list)."""
    for entry in _listed(value):
        if isinstance(entry, dict):
            entry = entry.get("name")
        if isinstance(entry, (str, int, float)) and not isinstance(entry, bool):
            text = " ".join(str(entry).split())
            if text:
                return text
    return ""


# --- Product ---------------------------------------------------------------------------------

_AVAILABILITY = re.compile(r"(?:https?://schema\.org/|schema:)?([A-Za-z]+)\s*$")


def _product(item: dict[str, Any]) -> list[Fact]:
    facts: list[Fact] = []
    offers = [o for o in _listed(item.get("offers")) if isinstance(o, dict)]
    price = _offer_price(offers)
    if price:
        facts.append(Fact("Price", price, Shown.NUMBERS))
    availability = _availability(offers)
    if availability:
        facts.append(Fact("Availability", availability))
    sku = _text(item.get("sku")) or next((_text(o.get("sku")) for o in offers if o.get("sku")), "")
    if sku:
        facts.append(Fact("SKU", sku))
    return facts


def _offer_price(offers: list[dict[str, Any]]) -> str:
    for offer in offers:
        specification = offer.get("priceSpecification")
        spec = specification if isinstance(specification, dict) else {}
        currency = _text(offer.get("priceCurrency")) or _text(spec.get("priceCurrency"))
        low, high = _text(offer.get("lowPrice")), _text(offer.get("highPrice"))
        if low and high and low != high:
            return _money(f"{_amount(low)} to {_amount(high)}", currency)
        price = _text(offer.get("price")) or _text(spec.get("price")) or low
        if price:
            return _money(_amount(price), currency)
    return ""


def _availability(offers: list[dict[str, Any]]) -> str:
    for offer in offers:
        value = _text(offer.get("availability"))
        match = _AVAILABILITY.search(value) if value else None
        if match:
            return _words(match.group(1))
    return ""


# --- JobPosting ------------------------------------------------------------------------------

_EMPLOYMENT = {
    "FULL_TIME": "Full-time",
    "PART_TIME": "Part-time",
    "CONTRACTOR": "Contract",
    "TEMPORARY": "Temporary",
    "INTERN": "Internship",
    "VOLUNTEER": "Volunteer",
    "PER_DIEM": "Per diem",
}
_PER = {"HOUR": "an hour", "DAY": "a day", "WEEK": "a week", "MONTH": "a month", "YEAR": "a year"}


def _job(item: dict[str, Any]) -> list[Fact]:
    facts: list[Fact] = []
    company = _text(item.get("hiringOrganization"))
    if company:
        facts.append(Fact("Company", company))
    places = [_place(p) for p in _listed(item.get("jobLocation"))]
    place = "; ".join(p for p in places if p)
    if _text(item.get("jobLocationType")).upper() == "TELECOMMUTE":
        place = f"{place} (remote)" if place else "Remote"
    if place:
        facts.append(Fact("Location", place, Shown.PLACE))
    salary = _salary(item.get("baseSalary"))
    if salary:
        facts.append(Fact("Salary", salary, Shown.NUMBERS))
    kinds = [
        _EMPLOYMENT.get(_text(k).upper(), _text(k)) for k in _listed(item.get("employmentType"))
    ]
    if any(kinds):
        facts.append(Fact("Employment", ", ".join(k for k in kinds if k)))
    return facts


def _place(value: object) -> str:
    if not isinstance(value, dict):
        return _text(value)
    address = value.get("address")
    parts = [_text(value.get("name"))]
    if isinstance(address, dict):
        parts += [_text(address.get(k)) for k in ("addressLocality", "addressRegion")]
        parts.append(_text(address.get("addressCountry")))
    elif address:
        parts.append(_text(address))
    seen: list[str] = []
    for part in parts:
        if part and part not in seen:
            seen.append(part)
    return ", ".join(seen)


def _salary(value: object) -> str:
    if not isinstance(value, dict):
        return _text(value)
    currency = _text(value.get("currency"))
    amount = value.get("value")
    unit = ""
    if isinstance(amount, dict):
        unit = _text(amount.get("unitText")).upper()
        low, high = _text(amount.get("minValue")), _text(amount.get("maxValue"))
        single = _text(amount.get("value"))
        if low and high:
            figure = f"{_amount(low)} to {_amount(high)}"
        else:
            figure = _amount(single or low or high)
    else:
        figure = _amount(_text(amount))
    if not figure:
        return ""
    per = _PER.get(unit, "")
    return " ".join(p for p in (_money(figure, currency), per) if p)


# --- Event -----------------------------------------------------------------------------------


def _event(item: dict[str, Any]) -> list[Fact]:
    facts: list[Fact] = []
    start, end = _when(_text(item.get("startDate"))), _when(_text(item.get("endDate")))
    if start:
        if end and end != start:
            same_day = end.rpartition(", ")[0] == start.rpartition(", ")[0] and ", " in end
            start = f"{start} to {end.rpartition(', ')[2] if same_day else end}"
        facts.append(Fact("When", start, Shown.NUMBERS))
    place = "; ".join(p for p in (_place(v) for v in _listed(item.get("location"))) if p)
    if place:
        facts.append(Fact("Where", place, Shown.PLACE))
    offers = [o for o in _listed(item.get("offers")) if isinstance(o, dict)]
    price = _offer_price(offers)
    if price:
        facts.append(Fact("Price", price, Shown.NUMBERS))
    return facts


_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2}))?")
_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip


def _when(value: str) -> str:
    """An ISO 8601 date (and time) as a reader writes it: ``14 December 2026, 17:00``."""
    match = _ISO.match(value)
    if not match:
        return value
    year, month, day, hour, minute = match.groups()
    if not 1 <= int(month) <= 12:
        return value
    date = f"{int(day)} {_MONTHS[int(month) - 1]} {year}"
    return f"{date}, {hour}:{minute}" if hour else date


# --- Shared ----------------------------------------------------------------------------------

_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")


def _amount(value: str) -> str:
    """A plain number grouped in thousands (``55000`` → ``55,000``; ``24.00`` as is)."""
    if not _NUMBER.match(value):
        return value
    whole, _, fraction = value.partition(".")
    grouped = f"{int(whole):,}"
    return f"{grouped}.{fraction}" if fraction else grouped


def _money(figure: str, currency: str) -> str:
    return f"{figure} {currency}" if currency else figure


def _words(name: str) -> str:
    """``InStock`` → ``In stock``."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name)
    return spaced[:1].upper() + spaced[1:].lower()


_FACTS = {PRODUCT: _product, JOB: _job, EVENT: _event}
_READ = frozenset({PRODUCT, JOB}) | EVENT_TYPES
# The properties the facts above read (a microdata or RDFa item's others are not read).
_PROPERTIES = frozenset(
    {"name", "title", "sku", "offers", "price", "priceCurrency", "lowPrice", "highPrice"}
    | {"availability", "priceSpecification", "hiringOrganization", "jobLocation", "address"}
    | {"addressLocality", "addressRegion", "addressCountry", "jobLocationType", "baseSalary"}
    | {"currency", "value", "minValue", "maxValue", "unitText", "employmentType"}
    | {"startDate", "endDate", "location"}
)
# What a script naming a type read here holds ("Event" ends most of the event types' names).
_READ_HINTS = ("Product", "JobPosting", "Event", "Festival", "Hackathon", "CourseInstance")
