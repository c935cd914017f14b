"""Task documents: created without empty fields, read back to the same record."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from scrapejobs_shared.adapters.firestore.codec import task_from_doc, task_to_doc
from scrapejobs_shared.domain.metered import Metered
from scrapejobs_shared.domain.records import TaskRecord
from scrapejobs_shared.domain.statuses import TaskStatus

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def a_task(**changes: object) -> TaskRecord:
    task = TaskRecord("job", "task", "https://a.example/", TaskStatus.QUEUED, NOW, NOW, NOW)
    return task.with_changes(expire_at=NOW + timedelta(days=7), **changes)


def test_a_task_document_indexes_only_what_queries_and_ttl_need() -> None:
    doc = task_to_doc(a_task(index=3, data={"title": "A", "tags": ["x"]}))
    # job_id: a job's results are a query at the root (task_documents.py)
    assert set(doc) == {"job_id", "url", "status", "updated_at", "expire_at", "r"}
    assert json.loads(doc["r"]) == {
        "index": 3, "data": {"title": "A", "tags": ["x"]}, "created_at": NOW.isoformat()
    }  # fmt: skip


def test_documents_written_field_by_field_still_read() -> None:
    legacy = {
        "url": "https://a.example/", "status": "failed", "attempts": 2, "error": "HTTP 404",
        "created_at": NOW, "updated_at": NOW, "expire_at": NOW,
    }  # fmt: skip
    task = task_from_doc("job", "task", legacy)
    assert task.attempts == 2 and task.error == "HTTP 404" and task.created_at == NOW


def test_task_documents_round_trip() -> None:
    for task in (
        a_task(index=3),
        a_task(
            status=TaskStatus.SUCCEEDED,
            attempts=2,
            http_status=200,
            data={"title": "A", "items": []},
            error="HTTP 503",
            fetched_at=NOW,
            elapsed_ms=0,
            metered=Metered(document_pages=12, screenshots=2),
            truncated_fields=("html",),
            field_errors={"price": "not a float"},
        ),
    ):
        assert task_from_doc("job", "task", task_to_doc(task)) == task
