"""Mapping between store records and Firestore document fields."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from scrapejobs_shared.adapters.firestore.task_documents import RESULTS_AT_ROOT
from scrapejobs_shared.delivery.batching import batch_group
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.metered import Metered
from scrapejobs_shared.domain.page_validators import PageValidators
from scrapejobs_shared.domain.records import (
    BatchItem,
    BatchRecord,
    Handoff,
    JobRecord,
    TaskOutcome,
    TaskRecord,
)
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.domain.tenancy import DEFAULT_TENANT
from scrapejobs_shared.politeness.host_key import host_key


def job_to_doc(job: JobRecord) -> dict[str, Any]:
    return {
        "status": job.status.value,
        "spec": job.spec.to_document(),
        "created_at": job.created_at,
        "updated_at": job.updated_at,
        "expire_at": job.expire_at,
        "labels": dict(job.labels),
        "total": job.total,
        "kind": job.kind,
        "trigger": job.trigger,
        "tenant": job.tenant,
        "publishing": job.publishing,
        "counter_shards": job.counter_shards,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
        RESULTS_AT_ROOT: True,  # where its results are (task_documents.py)
    } | ({"key_fingerprint": job.key_fingerprint} if job.key_fingerprint else {})


def job_from_doc(job_id: str, doc: Mapping[str, Any]) -> JobRecord:
    return JobRecord(
        id=job_id,
        status=JobStatus(doc["status"]),
        spec=JobSpec.model_validate(doc.get("spec") or {}),
        created_at=_as_datetime(doc["created_at"]),
        updated_at=_as_datetime(doc["updated_at"]),
        expire_at=_as_datetime(doc["expire_at"]),
        labels=dict(doc.get("labels") or {}),
        total=int(doc.get("total") or 0),
        kind=str(doc.get("kind") or "urls"),
        trigger=doc.get("trigger"),
        tenant=str(doc.get("tenant") or DEFAULT_TENANT),
        publishing=bool(doc.get("publishing")),
        counter_shards=_shards(doc.get("counter_shards")),
        started_at=_maybe_datetime(doc.get("started_at")),
        finished_at=_maybe_datetime(doc.get("finished_at")),
        key_fingerprint=doc.get("key_fingerprint"),
    )


def _shards(value: Any) -> int:
    """A job's counter shards: none for a job that holds its batch (batch_in_job.py)."""
    return 1 if value is None else int(value)


INDEXED_TASK_FIELDS = ("url", "status", "updated_at", "expire_at")


def task_to_doc(task: TaskRecord) -> dict[str, Any]:
    """A task's result document. What queries and TTL need is a field of its own; the rest is
    one JSON value (``r``): Firestore indexes every field and every value inside a map, so a
    result with its extracted data as a map costs the store two to three times more per write
    (measured on the emulator: bench/README.md), and the client twice as much to encode. Empty
    values are left out (reads default them)."""
    rest = {
        "index": task.index,
        "depth": task.depth,
        "attempts": task.attempts,
        "http_status": task.http_status,
        "data": task.data,
        "error": task.error,
        "fetched_at": _iso(task.fetched_at),
        "elapsed_ms": task.elapsed_ms,
        "rendered_ms": task.rendered_ms,
        **task.metered.to_fields(),
        "tls_unverified": task.tls_unverified,
        "truncated_fields": list(task.truncated_fields),
        "field_errors": task.field_errors,
        "created_at": _iso(task.created_at),
        "batch_id": task.batch_id,
        "replays": task.replays,
        "validators": None if task.validators is None else task.validators.to_doc(),
    }
    doc: dict[str, Any] = {
        "job_id": task.job_id,  # a root collection's document (task_documents.py)
        "url": task.url,
        "status": task.status.value,
        "updated_at": task.updated_at,
        "expire_at": task.expire_at,
    }
    if task.status is TaskStatus.DEAD_LETTERED:  # listed by host and tenant
        doc["host"] = _host_of(task.url)
        if task.tenant is not None:
            doc["tenant"] = task.tenant
    return doc | {
        "r": json.dumps(
            {k: v for k, v in rest.items() if not _empty(k, v)},
            separators=(",", ":"),
            ensure_ascii=False,
        ),
    }


def task_from_doc(job_id: str, task_id: str, doc: Mapping[str, Any]) -> TaskRecord:
    rest: Mapping[str, Any] = json.loads(doc["r"]) if "r" in doc else doc
    return TaskRecord(
        job_id=job_id,
        id=task_id,
        url=str(doc["url"]),
        status=TaskStatus(doc["status"]),
        index=int(rest.get("index") or 0),
        depth=int(rest.get("depth") or 0),
        attempts=int(rest.get("attempts") or 0),
        http_status=rest.get("http_status"),
        data=rest.get("data"),
        error=rest.get("error"),
        fetched_at=_maybe_datetime(rest.get("fetched_at")),
        elapsed_ms=rest.get("elapsed_ms"),
        rendered_ms=rest.get("rendered_ms"),
        metered=Metered.from_fields(rest),
        tls_unverified=bool(rest.get("tls_unverified")),
        truncated_fields=tuple(rest.get("truncated_fields") or ()),
        field_errors=rest.get("field_errors"),
        created_at=_as_datetime(rest.get("created_at") or doc["updated_at"]),
        batch_id=rest.get("batch_id"),
        replays=int(rest.get("replays") or 0),
        validators=PageValidators.from_doc(rest.get("validators")),
        tenant=doc.get("tenant"),
        updated_at=_as_datetime(doc["updated_at"]),
        expire_at=_as_datetime(doc["expire_at"]),
    )


def _host_of(url: str) -> str:
    try:
        return host_key(url)
    except ValueError:
        return ""


def _empty(name: str, value: Any) -> bool:
    if name in ("index", "depth", "attempts", "replays"):
        return bool(value == 0)
    return value is None or value is False or value == []


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def batch_to_doc(batch: BatchRecord, shard: int) -> dict[str, Any]:
    """A batch document: its tasks' states in one small document, written by one delivery at
    a time (about once a second at most while it runs). The tasks are one JSON string, not a
    list of maps: nothing queries them one by one, and a string costs the client and the
    server one value to encode instead of four per task (a 10,000-URL submission encodes
    10,000 of them)."""
    open_tasks = len(batch.open_items)
    return {
        "items": items_to_doc(batch.items),
        "open": open_tasks,
        # the reconcile query: active batches not written for a while (never a held one)
        "active": batch.active,
        "held": batch.held,
        "chained": batch.chained,
        "group": batch_group(batch),
        "shard": shard,
        "lease_until": batch.lease_until,
        "created_at": batch.created_at,
        "updated_at": batch.updated_at or batch.created_at,
        "expire_at": batch.expire_at,
        "lane": batch.lane,
        "tenant": batch.tenant,
    }


def batch_fields(batch: BatchRecord, now: datetime) -> dict[str, Any]:
    open_tasks = len(batch.open_items)
    return {
        "items": items_to_doc(batch.items),
        "open": open_tasks,
        "active": batch.active,
        "lease_until": batch.lease_until,
        "updated_at": now,
    }


def items_to_doc(items: tuple[BatchItem, ...]) -> str:
    rows = []
    for item in items:
        row: dict[str, Any] = {"id": item.task_id, "u": item.url, "s": item.status.value}
        counters = (("a", item.attempts), ("d", item.depth), ("i", item.index), ("r", item.replays))
        for key, value in counters:
            if value:
                row[key] = value
        if item.error is not None:
            row["e"] = item.error
        if item.validators is not None:
            row["v"] = item.validators.to_doc()
        rows.append(row)
    return json.dumps(rows, separators=(",", ":"), ensure_ascii=False)


def batch_from_doc(job_id: str, batch_id: str, doc: Mapping[str, Any]) -> BatchRecord:
    items = tuple(
        BatchItem(
            task_id=str(row["id"]),
            url=str(row["u"]),
            status=TaskStatus(row["s"]),
            attempts=int(row.get("a") or 0),
            error=row.get("e"),
            depth=int(row.get("d") or 0),
            index=int(row.get("i") or 0),
            replays=int(row.get("r") or 0),
            validators=PageValidators.from_doc(row.get("v")),
        )
        for row in json.loads(doc.get("items") or "[]")
    )
    return BatchRecord(
        job_id=job_id,
        id=batch_id,
        items=items,
        created_at=_as_datetime(doc["created_at"]),
        expire_at=_as_datetime(doc["expire_at"]),
        lease_until=_maybe_datetime(doc.get("lease_until")),
        lane=str(doc.get("lane") or "normal"),
        tenant=str(doc.get("tenant") or DEFAULT_TENANT),
        held=bool(doc.get("held")),
        chained=bool(doc.get("chained")),
        wait_until=_maybe_datetime(doc.get("wait_until")),
        wait_deferrals=int(doc.get("wait_deferrals") or 0),
    )


def _as_datetime(value: Any) -> datetime:
    if isinstance(value, str):  # inside a JSON value
        return datetime.fromisoformat(value)
    if not isinstance(value, datetime):
        raise TypeError(f"expected a timestamp, got {type(value).__name__}")
    return value


def _maybe_datetime(value: Any) -> datetime | None:
    return None if value is None else _as_datetime(value)


def handoff_to_doc(handoff: Handoff, expire_at: datetime) -> dict[str, Any]:
    """A handoff as one JSON string (its data may hold what a Firestore map cannot)."""
    outcome = handoff.outcome
    body = {
        "status": outcome.status.value,
        "http_status": outcome.http_status,
        "data": outcome.data,
        "error": outcome.error,
        "fetched_at": outcome.fetched_at.isoformat() if outcome.fetched_at else None,
        "elapsed_ms": outcome.elapsed_ms,
        "truncated_fields": list(outcome.truncated_fields),
        "field_errors": outcome.field_errors,
        "rendered_ms": outcome.rendered_ms,
        **outcome.metered.to_fields(),
        "tls_unverified": outcome.tls_unverified,
        "validators": None if outcome.validators is None else outcome.validators.to_doc(),
        "input": handoff.model_input,
    }
    return {"json": json.dumps(body, separators=(",", ":")), "expire_at": expire_at}


def handoff_from_doc(doc: dict[str, Any]) -> Handoff:
    body = json.loads(doc["json"])
    fetched_at = body.get("fetched_at")
    outcome = TaskOutcome(
        status=TaskStatus(body["status"]),
        http_status=body.get("http_status"),
        data=body.get("data"),
        error=body.get("error"),
        fetched_at=datetime.fromisoformat(fetched_at) if fetched_at else None,
        elapsed_ms=body.get("elapsed_ms"),
        truncated_fields=tuple(body.get("truncated_fields") or ()),
        field_errors=body.get("field_errors"),
        rendered_ms=body.get("rendered_ms"),
        metered=Metered.from_fields(body),
        tls_unverified=bool(body.get("tls_unverified")),
        validators=PageValidators.from_doc(body.get("validators")),
    )
    return Handoff(outcome, str(body.get("input") or ""))


def approx_size(value: Any) -> int:
    """A document's size, roughly as Firestore counts it (strings by their UTF-8 length)."""
    if isinstance(value, str):
        return len(value.encode()) + 1
    if isinstance(value, dict):
        return sum(len(key) + 1 + approx_size(item) for key, item in value.items())
    if isinstance(value, list | tuple):
        return sum(approx_size(item) for item in value)
    return 8
