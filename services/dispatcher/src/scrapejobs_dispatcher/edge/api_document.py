"""The OpenAPI document as this deployment accepts requests: without an AI provider configured,
a pipeline has no ``ai`` stage, Firecrawl's formats no ``json``, and neither API the formats an
``ai`` stage answers (``summary``): all would be refused, so the document offers none. A proxy's
country is one some pool serves, and ``stealth`` is offered where a stealth pool is (a country
served by one tier only is still refused for the other, naming it)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from scrapejobs_shared.extraction.formats import FORMATS
from scrapejobs_shared.options.proxy_pools import TIERS, ProxyChoice, ProxyPool


def describe_this_deployment(
    app: FastAPI, ai_provider: str | None, proxies: ProxyPool | None
) -> None:
    """Make ``app.openapi()`` answer the document this deployment honours (``proxies``: the
    pools every caller's jobs go through; None: tenants have their own, every country and tier
    is offered and refused at submit where the caller's pools serve none)."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = generate()  # kept by FastAPI as app.openapi_schema
            if ai_provider is None:
                _without_ai_stage(document)
            if proxies is not None:
                _served_proxies(document, proxies)
        return app.openapi_schema or {}

    app.openapi = openapi  # type: ignore[method-assign]


def _without_ai_stage(document: dict[str, Any]) -> None:
    schemas = document.get("components", {}).get("schemas", {})
    stage = schemas.get("Stage", {})
    stage.get("properties", {}).pop("ai", None)
    schemas.pop("AiOptions", None)
    json_format = "#/components/schemas/JsonFormat"
    for schema in schemas.values():
        items = schema.get("properties", {}).get("formats", {}).get("items", {})
        if "anyOf" in items:
            items["anyOf"] = [o for o in items["anyOf"] if o.get("$ref") != json_format]
    schemas.pop("JsonFormat", None)
    staged = {name for f in FORMATS if f.stage is not None for name in (f.name, f.firecrawl)}
    for schema in schemas.values():
        _drop_names(schema.get("properties", {}).get("formats", {}), staged)
        _drop_names(schema.get("properties", {}).get("type", {}), staged)


def _served_proxies(document: dict[str, Any], pool: ProxyPool) -> None:
    schemas = document.get("components", {}).get("schemas", {})
    countries = sorted({c for tier in TIERS for c in pool.countries(tier)})
    for name in ("ProxyOptions", "FirecrawlLocation"):
        country = schemas.get(name, {}).get("properties", {}).get("country")
        if country is not None:
            served = {"type": "string", "enum": countries} if countries else None
            country["anyOf"] = [*([served] if served else []), {"type": "null"}]
    if pool.offers(ProxyChoice("stealth")):
        return
    for schema in schemas.values():
        properties = schema.get("properties", {})
        if schema.get("title") == "ProxyOptions":
            _drop_names(properties.get("tier", {}), {"stealth"})
        elif "proxy" in properties and "$ref" not in str(properties["proxy"]):
            _drop_names(properties["proxy"], {"stealth", "enhanced"})


def _drop_names(schema: Any, names: set[str | None]) -> None:
    """``names`` out of every ``enum`` in ``schema`` (a format list's, a format's name)."""
    if isinstance(schema, dict):
        if isinstance(schema.get("enum"), list):
            schema["enum"] = [value for value in schema["enum"] if value not in names]
        for inner in schema.values():
            _drop_names(inner, names)
    elif isinstance(schema, list):
        for inner in schema:
            _drop_names(inner, names)
