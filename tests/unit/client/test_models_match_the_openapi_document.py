"""The client's models against the dispatcher's OpenAPI document: every field the client reads
is one the API answers, every field the API answers is one the client models (nothing dropped
silently), a field the client requires is one the API always sends, and a nested model is the
client's model of the schema it refers to. A change to either side that forgets the other
fails here."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from scrapejobs_client import models
from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from support.memory_dispatcher import memory_dispatcher

# client model -> the dispatcher's schema it mirrors
MIRRORS: dict[type[BaseModel], str] = {
    models.JobProgress: "JobProgress",
    models.JobSummary: "JobSummary",
    models.AiUsage: "AiUsage",
    models.Job: "JobDetail",
    models.JobPage: "JobList",
    models.TaskResult: "TaskResult",
    models.ResultPage: "ResultPage",
    models.Scraped: "ScrapeResponse",
    models.Replayed: "Replayed",
    models.ApiKey: "KeyView",
    models.CreatedApiKey: "CreatedKey",
    models.Quota: "QuotaBody",
    models.TenantQuota: "TenantView",
    models.Tenants: "TenantList",
    models.TenantUsage: "UsageView",
    models.TenantProxy: "ProxyListed",
    models.TenantProxies: "PoolView",
    models.SearchResults: "SearchAnswer",
    models.DeadLetter: "DeadLetter",
    models.DeadLetterPage: "DeadLetterPage",
    models.HostState: "HostView",
    models.WorkerInFlight: "InFlight",
    models.Worker: "WorkerEntry",
    models.WorkerProxy: "ProxyEntry",
    models.TaskTotals: "TaskCounts",
    models.ProcessingTimes: "Timing",
    models.FetchTimes: "FetchTiming",
    models.PausedHost: "PausedHostView",
    models.Stats: "StatsView",
    models.HourStats: "HourView",
    models.StatsHistory: "HistoryView",
    models.Health: "HealthView",
    models.Republished: "Republished",
    models.ReconcileReport: "ReconcileReport",
    models.Webhook: "WebhookSpec",
}


@pytest.fixture(scope="module")
def schemas() -> dict[str, Any]:
    # tenants' own proxy pools on: their resource is in the document
    settings = DispatcherSettings(auth_mode="none", tenant_proxies=True)
    app = memory_dispatcher(MemoryJobStore(), settings)
    found: dict[str, Any] = app.openapi()["components"]["schemas"]
    return found


def _model_classes() -> list[type[BaseModel]]:
    return [
        value
        for value in vars(models).values()
        if isinstance(value, type)
        and issubclass(value, BaseModel)
        and value.__module__ == models.__name__
        and value not in (models.ApiModel, models.Page)
    ]


def test_every_client_model_names_the_schema_it_mirrors() -> None:
    assert set(_model_classes()) == set(MIRRORS)


@pytest.mark.parametrize("model", list(MIRRORS), ids=lambda m: m.__name__)
def test_fields_match(model: type[BaseModel], schemas: dict[str, Any]) -> None:
    schema = schemas[MIRRORS[model]]
    answered = set(schema["properties"])
    read = {field.alias or name for name, field in model.model_fields.items()}
    assert read - answered == set(), f"{model.__name__} reads fields the API does not send"
    assert answered - read == set(), f"{model.__name__} drops fields the API sends"
    always = set(schema.get("required", []))
    required = {
        field.alias or name for name, field in model.model_fields.items() if field.is_required()
    }
    assert required <= always, f"{model.__name__} requires fields the API may leave out"


@pytest.mark.parametrize("model", list(MIRRORS), ids=lambda m: m.__name__)
def test_nested_models_mirror_the_schemas_referred_to(
    model: type[BaseModel], schemas: dict[str, Any]
) -> None:
    by_schema = {name: client for client, name in MIRRORS.items()}
    properties = schemas[MIRRORS[model]]["properties"]
    for name, field in model.model_fields.items():
        nested = _nested_model(field.annotation)
        if nested is None:
            continue
        referred = _referred(properties[field.alias or name])
        assert referred is not None, f"{model.__name__}.{name}: the API sends no object here"
        assert by_schema.get(referred) is nested or issubclass(by_schema[referred], nested), (
            f"{model.__name__}.{name} is a {nested.__name__}, the API's is a {referred}"
        )


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for argument in getattr(annotation, "__args__", ()):
        found = _nested_model(argument)
        if found is not None:
            return found
    return None


def _referred(schema: dict[str, Any]) -> str | None:
    """The component a property's schema refers to (directly, as list items, or nullable)."""
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            return _referred(schema[key])
    for option in schema.get("anyOf", []) + schema.get("allOf", []):
        found = _referred(option)
        if found is not None:
            return found
    return None
