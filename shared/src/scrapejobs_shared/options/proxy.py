"""``proxy``: which of the deployment's proxies a job's pages go through (proxy_pools.py), by
tier and country. It fails closed: a job asking for a tier or a country no pool serves is
refused at submit (422, naming the field and the value), never fetched directly instead.

* ``basic`` (the default): the deployment's own route: its basic pool, or direct where it has
  none (``SCRAPEJOBS_PROXY_DEFAULT`` says whether a job that asks nothing goes direct or
  through the basic pool); with a country, a basic proxy of that country.
* ``stealth``: a proxy of the stealth pool (of the country, if one is asked).
* ``auto``: the deployment's own route first (the country's basic proxy, with a country), then
  the stealth pool for a page that answered a challenge, a 403 or a 429.

| Firecrawl | native |
|---|---|
| ``proxy: basic`` | ``options.proxy.tier: basic`` |
| ``proxy: stealth``, ``enhanced`` | ``options.proxy.tier: stealth`` |
| ``proxy: auto`` | ``options.proxy.tier: auto`` |
| ``location.country`` | ``options.proxy.country`` |

On an upload (nothing is fetched) it is accepted and does nothing."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .option_family import NotServed, OptionFamily, ServedHere
from .proxy_pools import COUNTRY, ProxyChoice, ProxyPool

ProxyMode = Literal["basic", "stealth", "auto"]
FirecrawlProxy = Literal["basic", "stealth", "enhanced", "auto"]
FIRECRAWL_TIERS: dict[str, ProxyMode] = {
    "basic": "basic",
    "stealth": "stealth",
    "enhanced": "stealth",
    "auto": "auto",
}


class ProxyOptions(BaseModel):
    """Which proxies a job's pages go through."""

    model_config = ConfigDict(extra="forbid", strict=True)

    tier: ProxyMode = Field(
        default="basic",
        description="basic: the deployment's own route (its basic pool, or direct where it has "
        "none); stealth: its stealth pool; auto: its own route, then stealth for a page that "
        "answered a challenge, a 403 or a 429",
    )
    country: str | None = Field(
        default=None,
        pattern=COUNTRY.pattern,
        description="An ISO 3166-1 alpha-2 code (upper case): a proxy of the tier in this "
        "country. Refused where no pool serves it (never fetched directly instead)",
    )


class Proxy(OptionFamily):
    name = "proxy"
    native_fields = {
        "options": {
            "proxy": (
                ProxyOptions | None,
                Field(
                    default=None,
                    description="Proxies the pages go through, by tier and country (unset: "
                    "the deployment's default, SCRAPEJOBS_PROXY_DEFAULT)",
                ),
            )
        }
    }
    firecrawl_fields = {
        "scrape_options": {
            "proxy": (
                FirecrawlProxy | None,
                Field(
                    default=None,
                    description="basic: the deployment's own route; stealth and enhanced: its "
                    "stealth pool; auto: its own route, then stealth for a page that answered a "
                    "challenge, a 403 or a 429. location.country picks the pool's country",
                ),
            )
        }
    }
    firecrawl_names = {
        "options.proxy": "proxy",
        "options.proxy.tier": "proxy",
        "options.proxy.country": "location.country",
    }
    uploads = "ignored"

    def of(self, options: Any) -> ProxyOptions | None:
        found: ProxyOptions | None = getattr(options, "proxy", None)
        return found

    def served(self, request: Any, here: ServedHere) -> NotServed | None:
        asked = self.of(request.options)
        return None if asked is None else refusal(asked, here.proxies)

    def options_to_native(self, given: BaseModel, native: dict[str, Any], here: ServedHere) -> None:
        mode: str | None = getattr(given, "proxy", None)
        location = getattr(given, "location", None)
        country: str | None = getattr(location, "country", None)
        if mode is None and country is None:
            return
        asked: dict[str, Any] = {"tier": FIRECRAWL_TIERS[mode or "basic"]}
        if country is not None:
            asked["country"] = country.upper()
        native["proxy"] = asked

    def choice(self, options: Any) -> ProxyChoice | None:
        """The proxy a job's pages go through first (None: the deployment's default)."""
        asked = self.of(options)
        if asked is None:
            return None
        tier = "basic" if asked.tier == "auto" else asked.tier
        return ProxyChoice(tier, asked.country)

    def escalates(self, options: Any) -> bool:
        """Whether a page that answered a challenge, a 403 or a 429 goes again through the
        stealth pool (``auto``)."""
        asked = self.of(options)
        return asked is not None and asked.tier == "auto"


def refusal(asked: ProxyOptions, pool: ProxyPool) -> NotServed | None:
    """Why ``pool`` cannot serve what a job asks (None: it can)."""
    country = asked.country
    if asked.tier == "auto":
        tiers: tuple[Literal["basic", "stealth"], ...] = ("basic", "stealth")
    else:
        tiers = (asked.tier,)
    if country is None and (asked.tier != "stealth" or pool.offers(ProxyChoice("stealth"))):
        return None  # basic and auto: the deployment's own route serves them
    if any(pool.offers(ProxyChoice(tier, country)) for tier in tiers):
        return None
    if country is None:
        return NotServed("options.proxy.tier", "stealth: no stealth proxy pool is configured here")
    served = sorted({c for tier in tiers for c in pool.countries(tier)})
    listed = f" (countries served: {', '.join(served)})" if served else ""
    what = "proxy" if asked.tier == "auto" else f"{asked.tier} proxy"
    return NotServed(
        "options.proxy.country", f"{country}: no {what} pool serves this country here{listed}"
    )


PROXY = Proxy()
