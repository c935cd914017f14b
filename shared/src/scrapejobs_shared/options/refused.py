"""Firecrawl's options this service refuses, listed once: each is accepted only at the values
that ask for nothing (the SDKs send some of them on every request) and is otherwise a ``400``
saying why. An option a family serves (``options/``) is taken off this list by its module
declaring the field for that body."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, Field
from pydantic.alias_generators import to_snake

from .option_family import FieldSpec, FirecrawlKind

NOT_SUPPORTED = "not supported by this service"


@dataclass(frozen=True, slots=True)
class Refusal:
    inert: tuple[Any, ...]  # the values that ask for nothing (None: absent)
    kinds: tuple[FirecrawlKind, ...] = ("scrape_options",)
    why: str = NOT_SUPPORTED


REFUSED: dict[str, Refusal] = {
    "location": Refusal((None,), ("map",), "requests are not routed through other countries"),
    "fastMode": Refusal((None, False), why="not supported"),
    "useMock": Refusal((None,)),
    "minAge": Refusal((None, 0)),
    "lockdown": Refusal((None, False)),
    "checkPromptInjection": Refusal((None, False)),
    "redactPII": Refusal((None, False)),
    "threatProtection": Refusal((None,), ("scrape_options", "map")),
    "auditMetadata": Refusal((None,), ("scrape_options", "map")),
    "profile": Refusal((None,)),
    "domainTools": Refusal((None, False)),
    "toolDetail": Refusal((None,)),
    "zeroDataRetention": Refusal(
        (None, False),
        ("batch", "crawl"),
        "a batch's or a crawl's results are read later by paging its status, so they are kept "
        "for the deployment's retention period (zeroDataRetention is served on /v2/scrape)",
    ),
    "appendToId": Refusal((None,), ("batch",), "a batch cannot be appended to"),
    "prompt": Refusal((None,), ("crawl",), "crawl options are not written from a prompt here"),
    "allowExternalLinks": Refusal(
        (None, False), ("crawl",), "a crawl stays on its site (allowSubdomains widens it)"
    ),
    "robotsUserAgent": Refusal(
        (None,), ("crawl",), "robots.txt is read as this service's own user agent"
    ),
    "regexOnFullURL": Refusal(
        (None, False), ("crawl",), "includePaths and excludePaths match the URL's path"
    ),
}


def refused_fields(kind: FirecrawlKind, served: frozenset[str]) -> dict[str, FieldSpec]:
    """The refused options of a body of ``kind``, but those named in ``served``: each a field
    documented as the values that ask for nothing."""
    return {
        to_snake(name): _field(name, refusal)
        for name, refusal in REFUSED.items()
        if kind in refusal.kinds and name not in served
    }


def _field(name: str, refusal: Refusal) -> FieldSpec:
    def inert_only(value: Any) -> Any:
        if any(type(value) is type(inert) and value == inert for inert in refusal.inert):
            return value  # 0 is not false, as the schema's enum says
        raise ValueError(f"{refusal.why}; leave {name} out")

    inert = list(refusal.inert)
    return (
        Annotated[Any, AfterValidator(inert_only)],
        Field(
            default=None,
            alias=name,
            description=f"Refused unless {' or '.join(json.dumps(v) for v in inert)}: "
            + refusal.why,
            json_schema_extra={"enum": inert},
        ),
    )
