"""The OpenAPI document as this deployment accepts requests: without an AI provider configured,
a pipeline has no ``ai`` stage, Firecrawl's formats no ``json``, and neither API the formats an
``ai`` stage answers (``summary``): all would be refused, so the document offers none."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from scrapejobs_shared.extraction.formats import FORMATS


def describe_this_deployment(app: FastAPI, ai_provider: str | None) -> None:
    """Make ``app.openapi()`` answer the document this deployment honours."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = generate()  # kept by FastAPI as app.openapi_schema
            if ai_provider is None:
                _without_ai_stage(document)
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
