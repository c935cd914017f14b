"""DELETE removes a job, every document under it and its results (at the root:
task_documents.py), on the real Firestore emulator."""

from __future__ import annotations

import pytest
from google.cloud.firestore_v1.base_query import FieldFilter

from support.jobs import PRODUCT_FIELDS, submit, wait_finished

pytestmark = [pytest.mark.emulators, pytest.mark.stack]


async def count_documents(collection) -> int:
    """Every document below a collection, subcollections included."""
    total = 0
    async for ref in collection.list_documents():
        total += 1 if (await ref.get()).exists else 0
        async for sub in ref.collections():
            total += await count_documents(sub)
    return total


async def results_of(store, job_id: str) -> int:
    """The job's result documents at the root."""
    query = store._client.collection("tasks").where(filter=FieldFilter("job_id", "==", job_id))
    return len([snap async for snap in query.stream()])


async def test_delete_leaves_no_document_behind(api, site, store) -> None:
    body = {"urls": [f"{site.url}/product/{n}" for n in range(5)], "extract": PRODUCT_FIELDS}
    job = await submit(api, body)
    running = await api.delete(f"/v1/jobs/{job['id']}")
    if running.status_code == 409:  # still running: delete refuses, the job is untouched
        assert running.json()["error"]["code"] == "job_running"
    await wait_finished(api, job["id"])
    job_ref = store._client.collection("jobs").document(job["id"])
    documents = 1 + sum([await count_documents(c) async for c in job_ref.collections()])
    assert documents >= 1  # the job (its batch and counts inside it, or beside it)
    assert await results_of(store, job["id"]) == 5  # its results

    response = await api.delete(f"/v1/jobs/{job['id']}")

    assert response.status_code == 204
    assert not (await job_ref.get()).exists
    assert sum([await count_documents(c) async for c in job_ref.collections()]) == 0
    assert await results_of(store, job["id"]) == 0
    assert (await api.get(f"/v1/jobs/{job['id']}")).status_code == 404
    assert (await api.delete(f"/v1/jobs/{job['id']}")).status_code == 404


async def test_a_running_job_cannot_be_deleted(api, site) -> None:
    body = {"urls": [f"{site.url}/slow/del-{n}?s=1&times=1" for n in range(8)]}
    job = await submit(api, body)
    response = await api.delete(f"/v1/jobs/{job['id']}")
    assert response.status_code == 409 and response.json()["error"]["code"] == "job_running"
    assert (await api.post(f"/v1/jobs/{job['id']}:cancel")).status_code == 200
    await wait_finished(api, job["id"])
    assert (await api.delete(f"/v1/jobs/{job['id']}")).status_code == 204
