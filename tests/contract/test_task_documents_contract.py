"""Where the Firestore adapter keeps a job's results (task_documents.py): at the root
(``tasks/{task_id}.{job_id}``, the job's id a field), read as that job's only; and results a
release before that layout wrote under their job (``jobs/{id}/tasks``), still listed, read,
found by status, replayed in place and deleted with their job. Against the real emulator."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from scrapejobs_shared.adapters.firestore.job_store import FirestoreJobStore
from scrapejobs_shared.adapters.firestore.task_documents import document_id
from scrapejobs_shared.adapters.page_token import InvalidPageToken, encode_token
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import BatchItem, BatchRecord, JobRecord, TaskOutcome
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.ports.batch_store import BatchClaim
from scrapejobs_shared.ports.job_store import Claimed
from scrapejobs_shared.ports.page import PageRequest
from scrapejobs_shared.ports.recovery_queries import TaskScope

pytestmark = pytest.mark.emulators

DEAD = TaskOutcome(TaskStatus.DEAD_LETTERED, error="HTTP 500")


def ok(n: int) -> TaskOutcome:
    return TaskOutcome(TaskStatus.SUCCEEDED, http_status=200, data={"n": n})


@pytest.fixture
async def client(stack: Any) -> AsyncIterator[firestore.AsyncClient]:
    made = firestore.AsyncClient(project=stack.config.project_id)
    yield made
    made.close()


def a_job(tasks: int, task_ids: list[str] | None = None) -> tuple[JobRecord, BatchRecord]:
    """A job of one batch of ``tasks`` pages (their ids ``task_ids``, else ``t0``, ``t1``...:
    ids another job may have too)."""
    now = datetime.now(UTC)
    job_id = uuid.uuid4().hex
    ids = task_ids or [f"t{n}" for n in range(tasks)]
    items = tuple(BatchItem(ids[n], f"http://a.example/{n}", index=n) for n in range(tasks))
    expire = now + timedelta(days=1)
    batch = BatchRecord(job_id=job_id, id="b0", items=items, created_at=now, expire_at=expire)
    job = JobRecord(
        job_id, JobStatus.QUEUED, JobSpec(), now, now, expire, total=tasks, counter_shards=2
    )
    return job, batch


async def settled(
    store: FirestoreJobStore, batch: BatchRecord, outcomes: list[TaskOutcome]
) -> None:
    now = datetime.now(UTC)
    claimed = await store.claim_batch(
        BatchClaim(batch.job_id, batch.id, now, now + timedelta(seconds=40))
    )
    assert isinstance(claimed, Claimed), claimed
    changes = [FinishTask(i.task_id, o) for i, o in zip(batch.items, outcomes, strict=True)]
    await store.settle(claimed.handle, changes, now)


async def a_settled_job(
    store: FirestoreJobStore, outcomes: list[TaskOutcome]
) -> tuple[JobRecord, BatchRecord]:
    """A job of one batch, its task ids random, each task ended with its outcome."""
    job, batch = a_job(len(outcomes), [uuid.uuid4().hex for _ in outcomes])
    await store.create_job(job, [batch])
    await settled(store, batch, outcomes)
    return job, batch


def at_root(client: firestore.AsyncClient, job_id: str) -> Any:
    return client.collection("tasks").where(filter=FieldFilter("job_id", "==", job_id))


def under_job(client: firestore.AsyncClient, job_id: str) -> Any:
    return client.collection("jobs").document(job_id).collection("tasks")


async def listed(store: FirestoreJobStore, job_id: str, page_size: int) -> list[str]:
    ids: list[str] = []
    token = None
    while True:
        page = await store.list_tasks(job_id, page_size, token)
        ids += [task.id for task in page.items]
        assert {task.job_id for task in page.items} <= {job_id}
        if (token := page.next_page_token) is None:
            return ids


async def dead_letters(store: FirestoreJobStore, job_id: str | None, page_size: int) -> list[Any]:
    found: list[Any] = []
    token = None
    while True:
        page = await store.tasks_with_status(
            TaskStatus.DEAD_LETTERED, TaskScope(job_id), PageRequest(page_size, token)
        )
        found += page.items
        if (token := page.next_page_token) is None:
            return found


async def test_two_jobs_with_the_same_task_ids_keep_their_own_results_at_the_root(
    client: firestore.AsyncClient,
) -> None:
    store = FirestoreJobStore(client)
    jobs = [a_job(3), a_job(3)]
    for n, (job, batch) in enumerate(jobs):
        await store.create_job(job, [batch])
        await settled(store, batch, [ok(n)] * 3)
    for n, (job, _) in enumerate(jobs):
        snaps = [snap async for snap in at_root(client, job.id).stream()]
        assert {snap.id for snap in snaps} == {document_id(job.id, f"t{k}") for k in range(3)}
        assert [doc async for doc in under_job(client, job.id).list_documents()] == []
        assert sorted(await listed(store, job.id, 2)) == ["t0", "t1", "t2"]
        task = await store.get_task(job.id, "t1")
        assert task is not None and (task.job_id, task.id, task.data) == (job.id, "t1", {"n": n})
    alone, _ = a_job(1, [uuid.uuid4().hex])
    assert await store.get_task(alone.id, "t1") is None  # another job's task id


async def test_dead_letters_at_the_root_are_listed_by_job_and_across_jobs(
    client: firestore.AsyncClient,
) -> None:
    store = FirestoreJobStore(client)
    job, batch = await a_settled_job(store, [DEAD, DEAD, ok(0)])
    mine = await dead_letters(store, job.id, 1)
    assert sorted(t.id for t in mine) == sorted(i.task_id for i in batch.items[:2])
    everyone = {(t.job_id, t.id) for t in await dead_letters(store, None, 200)}
    assert {(job.id, t.id) for t in mine} <= everyone


async def as_before_the_root_layout(client: firestore.AsyncClient, job_id: str) -> None:
    """Move a job's results where a release before the root layout wrote them: under the job,
    without the fields it did not write; and its document without its layout's mark."""
    async for snap in at_root(client, job_id).stream():
        doc = snap.to_dict()
        task_id = snap.id.removesuffix(f".{doc.pop('job_id')}")
        await under_job(client, job_id).document(task_id).set(doc)
        await snap.reference.delete()
    job_ref = client.collection("jobs").document(job_id)
    await job_ref.update({"results_at_root": firestore.DELETE_FIELD})


async def test_results_written_before_the_root_layout_are_still_read_replayed_and_deleted(
    client: firestore.AsyncClient,
) -> None:
    store = FirestoreJobStore(client)
    job, batch = await a_settled_job(store, [DEAD, DEAD, ok(7)])
    ids = [item.task_id for item in batch.items]
    await as_before_the_root_layout(client, job.id)
    reader = FirestoreJobStore(client)  # a process that never saw the job
    assert sorted(await listed(reader, job.id, 2)) == sorted(ids)
    task = await reader.get_task(job.id, ids[2])
    assert task is not None and task.data == {"n": 7} and task.job_id == job.id
    mine = await dead_letters(reader, job.id, 1)
    assert sorted(t.id for t in mine) == sorted(ids[:2])
    assert {(job.id, i) for i in ids[:2]} <= {
        (t.job_id, t.id) for t in await dead_letters(reader, None, 200)
    }
    now = datetime.now(UTC)
    assert await reader.reopen(job.id, "b0", [ids[0]], frozenset({TaskStatus.DEAD_LETTERED}), now)
    assert [snap async for snap in at_root(client, job.id).stream()] == []  # in its place
    replayed = await reader.get_task(job.id, ids[0])
    assert replayed is not None and replayed.status is TaskStatus.QUEUED
    assert sorted(await listed(reader, job.id, 2)) == sorted(ids)
    await reader.delete_job(job.id)
    assert [doc async for doc in under_job(client, job.id).list_documents()] == []
    gone = await reader.list_tasks(job.id, 10, None)
    assert gone.items == [] and gone.next_page_token is None


async def test_a_deleted_job_s_results_at_the_root_go_with_it(
    client: firestore.AsyncClient,
) -> None:
    store = FirestoreJobStore(client)
    job, _ = await a_settled_job(store, [ok(0)] * 3)
    assert len([snap async for snap in at_root(client, job.id).stream()]) == 3
    await store.delete_job(job.id)
    assert [snap async for snap in at_root(client, job.id).stream()] == []
    assert await store.get_job(job.id) is None


@pytest.mark.parametrize(
    "path",
    ["jobs/another/tasks/t0", "jobs/x/batches/b0", "hosts/h", "tasks/a/b", "", "tasks/"],
)
async def test_a_status_token_naming_no_task_of_the_listing_is_refused(
    client: firestore.AsyncClient, path: str
) -> None:
    store = FirestoreJobStore(client)
    token = encode_token([datetime.now(UTC).isoformat(), path])
    with pytest.raises(InvalidPageToken):
        await store.tasks_with_status(
            TaskStatus.DEAD_LETTERED, TaskScope("mine"), PageRequest(10, token)
        )
    bad_time = encode_token(["yesterday", "tasks/abc"])
    with pytest.raises(InvalidPageToken):
        await store.tasks_with_status(
            TaskStatus.DEAD_LETTERED, TaskScope(), PageRequest(10, bad_time)
        )
