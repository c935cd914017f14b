"""The OpenAPI document as this deployment accepts requests: without an AI provider configured,
a pipeline has no ``ai`` stage (it would be refused with a 422), so the document offers none."""

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
