"""Task documents: created without empty fields, read back to the same record."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from scrapejobs_shared.adapters.firestore.codec import task_from_doc, task_to_doc
from scrapejobs_shared.domain.records import TaskRecord
from scrapejobs_shared.domain.statuses import TaskStatus

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def a_task(**changes: object) -> TaskRecord:
    task = TaskRecord("job", "task", "https://a.example/", TaskStatus.QUEUED, NOW, NOW, NOW)
    return task.with_changes(expire_at=NOW + timedelta(days=7), **changes)


def test_a_new_task_document_holds_only_fields_with_values() -> None:
    doc = task_to_doc(a_task(index=3))
    assert set(doc) == {
        "url", "status", "index", "depth", "attempts", "created_at", "updated_at", "expire_at"
    }  # fmt: skip
    assert doc["attempts"] == 0 and doc["depth"] == 0


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
            elapsed_ms=4.5,
            truncated_fields=("html",),
            field_errors={"price": "not a float"},
            lease_until=NOW,
        ),
    ):
        assert task_from_doc("job", "task", task_to_doc(task)) == task
