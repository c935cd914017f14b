"""Plain writes are byte for byte what the Firestore library's ``set`` sends (no emulator
needed: both are compared before any commit)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone
from http import HTTPStatus
from typing import Any

import pytest
from google.api_core.datetime_helpers import DatetimeWithNanoseconds
from google.auth.credentials import AnonymousCredentials
from google.cloud import firestore
from google.cloud.firestore_v1.types import write as write_types
from proto.datetime_helpers import DatetimeWithNanoseconds as ProtoDatetimeWithNanoseconds

from scrapejobs_shared.adapters.firestore.batch_in_job import claim_updates, job_doc, settle_updates
from scrapejobs_shared.adapters.firestore.codec import task_to_doc
from scrapejobs_shared.adapters.firestore.plain_writes import (
    create_write,
    document_name,
    name_of,
    set_write,
    stage,
    update_write,
)
from scrapejobs_shared.domain.jobspec import JobRequest, JobSpec
from scrapejobs_shared.domain.model_usage import ModelUsage
from scrapejobs_shared.domain.records import BatchItem, BatchRecord, JobRecord, TaskRecord
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus

MOMENT = datetime(2026, 11, 24, 4, 22, 30, 118641, tzinfo=UTC)


@pytest.fixture(scope="module")
def client() -> firestore.Client:
    # never connects: writes are compared before any RPC
    return firestore.Client(project="plain-writes", credentials=AnonymousCredentials())  # type: ignore[no-untyped-call]


def _library_bytes(client: firestore.Client, ref: Any, data: dict[str, Any]) -> bytes:
    batch = client.batch()
    batch.set(ref, data)
    (write,) = batch._write_pbs
    return bytes(write_types.Write.pb(write).SerializeToString(deterministic=True))


def _plain_bytes(name: str, data: dict[str, Any]) -> bytes:
    return bytes(set_write(name, data).SerializeToString(deterministic=True))


DOCUMENTS: dict[str, dict[str, Any]] = {
    "scalars": {
        "s": "plain",
        "unicode": "é — 漢字 🙂",
        "empty": "",
        "none": None,
        "yes": True,
        "no": False,
        "zero": 0,
        "big": 2**62,
        "negative": -7,
        "float": 12.5,
        "nan": math.nan,
        "inf": -math.inf,
        "bytes": b"\x00\xff",
    },
    "times": {
        "aware": MOMENT,
        "other_zone": MOMENT.astimezone(timezone(timedelta(hours=-5))),
        "naive": MOMENT.replace(tzinfo=None),
        "nanos": DatetimeWithNanoseconds(  # type: ignore[no-untyped-call]
            2026, 11, 24, 4, 22, 30, nanosecond=118641123, tzinfo=UTC
        ),
        "epoch": datetime(1970, 1, 1, tzinfo=UTC),
        "before_epoch": datetime(1969, 7, 20, 20, 17, 40, 5, tzinfo=UTC),
    },
    "enums": {"status": TaskStatus.SUCCEEDED, "level": HTTPStatus.OK},
    "nested": {
        "list": ["a", 1, None, [2.5, {"k": "v"}]],
        "tuple": ("x", "y"),
        "empty_list": [],
        "map": {"a": {"b": {"c": [True]}}, "dotted.key": 1, "with space": "v"},
        "empty_map": {},
    },
}


@pytest.mark.parametrize("kind", DOCUMENTS)
def test_writes_match_the_librarys_set(client: firestore.Client, kind: str) -> None:
    ref = client.collection("jobs").document("job-1").collection("tasks").document("t-1")
    data = DOCUMENTS[kind]
    assert _plain_bytes(ref._document_path, data) == _library_bytes(client, ref, data)


def test_a_task_result_document_matches(client: firestore.Client) -> None:
    job = client.collection("jobs").document("job-1")
    record = TaskRecord(
        job_id="job-1",
        id="0123456789abcdef01234567",
        url="https://example.com/é?q=1",
        status=TaskStatus.DEAD_LETTERED,
        created_at=MOMENT,
        updated_at=MOMENT,
        expire_at=MOMENT + timedelta(days=30),
        attempts=5,
        http_status=503,
        data={"title": "t", "tags": ["a", "b"], "price": 9.99},
        error="http_503",
    )
    data = task_to_doc(record)
    name = document_name(job, "tasks", record.id)
    assert name == job.collection("tasks").document(record.id)._document_path
    assert _plain_bytes(name, data) == _library_bytes(
        client, job.collection("tasks").document(record.id), data
    )


def test_a_one_document_job_s_create_matches(client: firestore.Client) -> None:
    """What the dispatcher creates for a coalesced one-URL job: its document with its batch
    inside (batch_in_job.job_doc), as ``create`` sends it (the exists=false precondition)."""
    request = JobRequest.model_validate(
        {"url": "https://shop.example/p/1", "extract": {"title": {"css": "h1::text"}}}
    )
    job = JobRecord(
        "job-1",
        JobStatus.QUEUED,
        JobSpec.from_request(request),
        MOMENT,
        MOMENT,
        MOMENT + timedelta(days=30),
        labels={"run": "é"},
        total=1,
        publishing=True,
        key_fingerprint="ab" * 32,
    )
    batch = BatchRecord(
        "job-1", "b-1", (BatchItem("t-1", "https://shop.example/p/1"),), MOMENT, MOMENT
    )
    data = job_doc(job, batch)
    ref = client.collection("jobs").document("job-1")
    library = client.batch()
    library.create(ref, data)
    (expected,) = library._write_pbs
    plain = create_write(name_of(ref), data)
    assert bytes(plain.SerializeToString(deterministic=True)) == bytes(
        write_types.Write.pb(expected).SerializeToString(deterministic=True)
    )


def _updates() -> dict[str, dict[str, Any]]:
    items = (BatchItem("t-1", "https://shop.example/p/1", status=TaskStatus.RUNNING, attempts=1),)
    batch = BatchRecord("job-1", "b-1", items, MOMENT, MOMENT, lease_until=MOMENT)
    result = task_to_doc(
        TaskRecord(
            "job-1",
            "t-1",
            "https://shop.example/p/1",
            TaskStatus.SUCCEEDED,
            MOMENT,
            MOMENT,
            MOMENT,
            http_status=200,
            data={"title": "é"},
        )
    )
    return {
        "claim": claim_updates(batch, JobStatus.QUEUED, None, MOMENT),
        "claim_started": claim_updates(batch, JobStatus.CANCELLED, MOMENT, MOMENT),
        "settle": settle_updates(batch, ModelUsage(), True, MOMENT, result),
        "settle_open": settle_updates(batch, ModelUsage(), False, MOMENT),
    }


@pytest.mark.parametrize("kind", ["claim", "claim_started", "settle", "settle_open"])
@pytest.mark.parametrize("guarded", [True, False])
@pytest.mark.parametrize(
    "update_time",
    [ProtoDatetimeWithNanoseconds, DatetimeWithNanoseconds],
    ids=["update-time-as-the-client-answers-it", "api-core-datetime"],
)
def test_a_one_document_job_s_updates_match(
    client: firestore.Client, kind: str, guarded: bool, update_time: Any
) -> None:
    """A claim's and a settle's update of a job that holds its batch, as ``update`` sends
    them: guarded by the last update time (the claim token's, the claim's; its nanoseconds
    kept when it is an update time the client answered), or by existence."""
    ref = client.collection("jobs").document("job-1")
    updates = _updates()[kind]
    written = update_time(2026, 11, 27, 6, 1, 2, nanosecond=123456789, tzinfo=UTC)
    library = client.batch()
    option = client.write_option(last_update_time=written) if guarded else None
    library.update(ref, updates, option=option)
    (expected,) = library._write_pbs
    plain = update_write(name_of(ref), updates, written if guarded else None)
    assert bytes(plain.SerializeToString(deterministic=True)) == bytes(
        write_types.Write.pb(expected).SerializeToString(deterministic=True)
    )


def test_an_update_with_a_sentinel_is_left_to_the_library() -> None:
    with pytest.raises(TypeError):
        update_write(
            "projects/p/databases/(default)/documents/jobs/j", {"u.calls": firestore.Increment(1)}
        )
    with pytest.raises(ValueError):
        update_write("projects/p/databases/(default)/documents/jobs/j", {"a-b": 1})


def test_staged_writes_are_committed_in_order(client: firestore.Client) -> None:
    batch = client.batch()
    ref = client.collection("c").document("d")
    batch.update(ref, {"n": 1})
    stage(batch, [set_write(ref._document_path, {"n": 2}), set_write(ref._document_path, {})])
    assert len(batch._write_pbs) == 3
    assert write_types.Write.pb(batch._write_pbs[0]).HasField("update_mask")
    assert batch._write_pbs[1].update.fields["n"].integer_value == 2


@pytest.mark.parametrize("data", [{"": 1}, {"map": {"": 1}}])
def test_empty_field_names_are_refused_as_by_the_library(data: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="empty field name"):
        set_write("projects/p/databases/(default)/documents/c/d", data)


@pytest.mark.parametrize(
    "value", [firestore.SERVER_TIMESTAMP, firestore.DELETE_FIELD, object(), {1: "int key"}]
)
def test_anything_but_plain_values_is_refused(value: Any) -> None:
    with pytest.raises(TypeError):
        set_write("projects/p/databases/(default)/documents/c/d", {"field": value})


def test_the_library_is_the_release_the_plain_writes_were_checked_against() -> None:
    """plain_writes.py relies on private names: an upgrade must re-check that module (and
    then move the pin in shared/pyproject.toml)."""
    import tomllib
    from importlib.metadata import version
    from pathlib import Path

    assert version("google-cloud-firestore").startswith("2.34."), (
        "google-cloud-firestore changed: re-check adapters/firestore/plain_writes.py"
    )
    pyproject = Path(__file__).resolve().parents[3] / "shared/pyproject.toml"
    dependencies = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"]
    assert "google-cloud-firestore>=2.34.1,<2.35" in dependencies
    assert hasattr(firestore.AsyncWriteBatch, "_add_write_pbs"), "the library has no batch entry"
    assert hasattr(firestore.AsyncTransaction, "_add_write_pbs"), "nor a transaction one"
