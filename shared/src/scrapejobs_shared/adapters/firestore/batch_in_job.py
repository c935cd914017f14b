"""Jobs that hold their one batch (``holds_its_batch``: coalesced small jobs, one-URL jobs
above all): the job document carries the batch under ``b`` (the fields of a batch document,
and its id) and the ai stage's usage under ``u``; its counts are its batch's. Creating such a
job writes one document, claiming it one, and the settle that closes its last task completes
it in the same write: no counter shards, no batch document, and a status read is one
document. A job of one task keeps its result inside too (``t``, a task document's fields),
unless the result is listed by status across jobs (failed, dead-lettered: ``tasks_with_status``
queries task documents) or is large: then it is a task document, as every other result.

A claim token is what the first claim needs to write without reading: the job document's
update time after its creation (the write's precondition) and the batch as created. Any
other write since (a cancel, a replay, a republished duplicate's claim) fails the
precondition, and the claim reads the job as every other claim does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from google.api_core.datetime_helpers import DatetimeWithNanoseconds
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.codec import (
    approx_size,
    batch_fields,
    batch_from_doc,
    batch_to_doc,
    job_to_doc,
    task_from_doc,
    task_to_doc,
)
from scrapejobs_shared.domain.job_tally import JobTally
from scrapejobs_shared.domain.records import BatchRecord, JobRecord, TaskRecord
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus

BATCH = "b"  # the batch, a map of a batch document's fields and its ``id``
TALLY = "u"  # the job's tally, a map of JobTally's fields (the ai stage's usage, then more)
RESULT = "t"  # a one-task job's result, when it is kept inside (a task document's fields)
_TIMES = ("created_at", "updated_at", "expire_at", "lease_until", "wait_until")
# results listed by status across a job or every job (tasks_with_status): task documents
KEPT_APART = frozenset({TaskStatus.FAILED, TaskStatus.DEAD_LETTERED})
MAX_RESULT_INSIDE = 256 * 1024  # bytes of a result kept inside, at most
DOCUMENT_LIMIT = 1_048_576  # Firestore's, in bytes
GROWTH = 64 * 1024  # what a job document may gain besides a result (errors, usage, fields)


def job_doc(job: JobRecord, batch: BatchRecord) -> dict[str, Any]:
    """The document of a job that holds ``batch`` (its counter shards: none), with the room it
    has for a result inside (``room``: a large spec leaves less)."""
    doc = job_to_doc(job) | {"counter_shards": 0, BATCH: batch_to_doc(batch, 0) | {"id": batch.id}}
    doc[BATCH]["room"] = max(0, min(MAX_RESULT_INSIDE, DOCUMENT_LIMIT - GROWTH - approx_size(doc)))
    return doc


def room_in(doc: Mapping[str, Any] | None) -> int:
    """Bytes a job document holding its batch has for a result inside (0: none)."""
    return int(((doc or {}).get(BATCH) or {}).get("room") or 0)


def batch_in(job_id: str, doc: Mapping[str, Any] | None) -> BatchRecord | None:
    """The batch a job document holds; None for a job of the other layout."""
    held = (doc or {}).get(BATCH)
    if not isinstance(held, Mapping):
        return None
    return batch_from_doc(job_id, str(held["id"]), held)


def held_batch(job_id: str, batch_id: str, doc: Mapping[str, Any] | None) -> BatchRecord | None:
    """The batch ``batch_id`` when the job document holds it (else None)."""
    batch = batch_in(job_id, doc)
    return batch if batch is not None and batch.id == batch_id else None


def counts_of(batch: BatchRecord) -> dict[TaskStatus, int]:
    counts = dict.fromkeys(TaskStatus, 0)
    for item in batch.items:
        counts[item.status] += 1
    return counts


def result_in(job_id: str, doc: Mapping[str, Any] | None) -> TaskRecord | None:
    """The result a job document keeps inside (None: none, or in a task document)."""
    kept = (doc or {}).get(RESULT)
    if not isinstance(kept, Mapping):
        return None
    return task_from_doc(job_id, str(kept["id"]), kept)


@dataclass(frozen=True, slots=True)
class Results:
    """Where a settle of a job holding its batch writes its results."""

    inside: dict[str, Any] | None  # the one task's result, kept in the job document
    apart: tuple[TaskRecord, ...]  # written as task documents
    outdated: tuple[str, ...]  # task documents a result inside replaces (a replayed task's)


def place_results(batch: BatchRecord, results: Sequence[TaskRecord], room: int) -> Results:
    """``room``: bytes the job's document has for a result (``room_in``)."""
    if len(batch.items) != 1 or len(results) != 1 or results[0].status in KEPT_APART:
        return Results(None, tuple(results), ())
    [record] = results
    inside = task_to_doc(record) | {"id": record.id}
    if approx_size(inside) > room:
        return Results(None, (record,), ())
    replayed = batch.items[0].replays > 0  # its task document may hold an earlier ending
    return Results(inside, (), (record.id,) if replayed else ())


def tally_of(doc: Mapping[str, Any]) -> JobTally:
    return JobTally.from_fields(doc.get(TALLY) or {})


def batch_updates(batch: BatchRecord, now: datetime) -> dict[str, Any]:
    """The batch's fields a claim or a settle writes (``batch_fields`` of a batch document)."""
    return {f"{BATCH}.{name}": value for name, value in batch_fields(batch, now).items()}


def claim_updates(
    batch: BatchRecord, status: JobStatus, started_at: datetime | None, now: datetime
) -> dict[str, Any]:
    """A claim's write: the batch leased, the job running (a cancelled job stays so) and
    published (its message reached a worker), its start recorded by its first claim."""
    fields = batch_updates(batch, now) | {"publishing": False}
    if status is JobStatus.QUEUED:
        fields |= {"status": JobStatus.RUNNING.value, "updated_at": now}
    if started_at is None:
        fields["started_at"] = now
    return fields


def settle_updates(
    batch: BatchRecord,
    tally: JobTally,
    completes: bool,
    now: datetime,
    inside: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A settle's write: the batch, what it adds to the job's tally, the result kept inside
    (``inside``), and the job's completion when the batch has no open task left and the job runs
    (``completes``)."""
    fields = batch_updates(batch, now) | ({RESULT: inside} if inside is not None else {})
    fields |= {f"{TALLY}.{name}": firestore.Increment(n) for name, n in tally.to_fields().items()}
    if completes:
        fields |= {"status": JobStatus.COMPLETED.value, "updated_at": now, "finished_at": now}
    return fields


@dataclass(frozen=True, slots=True)
class FirstClaim:
    """What a claim token says: the job as created."""

    update_time: DatetimeWithNanoseconds
    status: JobStatus
    batch: BatchRecord
    room: int  # for a result inside (``room_in``)


def claim_token(update_time: DatetimeWithNanoseconds, doc: Mapping[str, Any]) -> str:
    held = {
        name: value.isoformat() if name in _TIMES and value is not None else value
        for name, value in doc[BATCH].items()
    }
    written = update_time.rfc3339()  # type: ignore[no-untyped-call]  # with its nanoseconds
    return json.dumps({"v": written, "s": doc["status"], BATCH: held}, separators=(",", ":"))


def first_claim(job_id: str, batch_id: str, token: str) -> FirstClaim | None:
    """The job as its creation left it; None for a token that is not one (or of another
    batch): the claim then reads."""
    try:
        body = json.loads(token)
        batch = batch_from_doc(job_id, str(body[BATCH]["id"]), body[BATCH])
        written = DatetimeWithNanoseconds.from_rfc3339(body["v"])  # type: ignore[no-untyped-call]
        first = FirstClaim(written, JobStatus(body["s"]), batch, room_in(body))
    except (ValueError, KeyError, TypeError):
        return None
    return first if batch.id == batch_id else None
