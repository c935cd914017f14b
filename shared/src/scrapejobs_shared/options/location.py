"""``location``: where a page is asked from. Its ``languages`` are served: the pages are asked
for in them (``Accept-Language``, most wanted first) and a rendered page's browser speaks the
first (its locale: ``navigator.language``, ``Intl``); a job's own ``Accept-Language`` header
wins over its languages. Its ``country`` is the proxy family's (proxy.py): the pages go through
a proxy of that country, or the job is refused where no pool serves it.

| Firecrawl | native |
|---|---|
| ``location.languages`` | ``options.location.languages`` |
| ``location.country`` | ``options.proxy.country`` (proxy.py) |"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from .camel_model import CamelModel
from .option_family import OptionFamily, ServedHere

MAX_LANGUAGES = 10
# a BCP 47 language tag, as Accept-Language takes it: "de", "de-DE", "zh-Hant-TW"
LanguageTag = Annotated[
    str, StringConstraints(pattern=r"^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$", max_length=35)
]


class LocationOptions(BaseModel):
    """Where a page is asked from: its languages."""

    model_config = ConfigDict(extra="forbid", strict=True)

    languages: list[LanguageTag] = Field(
        min_length=1,
        max_length=MAX_LANGUAGES,
        description="Languages the pages are asked in, most wanted first (Accept-Language; a "
        "rendered page's browser locale is the first)",
    )


class FirecrawlLocation(CamelModel):
    """Firecrawl's ``location``: its languages, and its country (the proxy family's)."""

    country: str | None = Field(
        default=None,
        max_length=2,
        description="An ISO 3166-1 alpha-2 code: the pages go through a proxy of this country "
        "(refused where no proxy pool serves it)",
    )
    languages: list[LanguageTag] | None = Field(
        default=None, min_length=1, max_length=MAX_LANGUAGES
    )


def accept_language(languages: list[str]) -> str:
    """``["de-DE", "de", "en"]`` → ``de-DE,de;q=0.9,en;q=0.8`` (weights down to 0.1)."""
    weighted = [
        tag if rank == 0 else f"{tag};q={max(10 - rank, 1) / 10:g}"
        for rank, tag in enumerate(languages)
    ]
    return ",".join(weighted)


class Location(OptionFamily):
    name = "location"
    native_fields = {
        "options": {
            "location": (
                LocationOptions | None,
                Field(default=None, description="Where the pages are asked from: languages"),
            )
        }
    }
    firecrawl_fields = {
        "scrape_options": {
            "location": (
                FirecrawlLocation | None,
                Field(
                    default=None,
                    description="languages: Accept-Language and the browser's locale; "
                    "country: a proxy of that country (refused where no pool serves it)",
                ),
            )
        }
    }
    firecrawl_names = {"options.location": "location"}
    uploads = "refused"

    def of(self, options: Any) -> LocationOptions | None:
        found: LocationOptions | None = getattr(options, "location", None)
        return found

    def options_to_native(self, given: BaseModel, native: dict[str, Any], here: ServedHere) -> None:
        location: FirecrawlLocation | None = getattr(given, "location", None)
        if location is not None and location.languages:
            native["location"] = {"languages": list(location.languages)}

    def request_headers(self, options: Any) -> Mapping[str, str]:
        location = self.of(options)
        if location is None:
            return {}
        return {"accept-language": accept_language(location.languages)}

    def browser_context(self, options: Any) -> Mapping[str, str]:
        location = self.of(options)
        return {} if location is None else {"locale": location.languages[0]}


LOCATION = Location()
