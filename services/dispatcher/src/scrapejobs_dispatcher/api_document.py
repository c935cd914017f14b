"""The OpenAPI document as this deployment accepts requests: without an AI provider configured,
a pipeline has no ``ai`` stage and Firecrawl's formats no ``json`` (both would be refused), so
the document offers neither."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI


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
