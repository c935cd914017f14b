"""GET /v1/jobs/{id}/results:export over the in-memory store: every result, the same objects
as the results API, read from the store a page at a time."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta

import pytest

from scrapejobs_dispatcher.jobs.job_export import EXPORT_PAGE, JobExport
from scrapejobs_dispatcher.jobs.result_export import RESULT_COLUMNS, cell, csv_chunks
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.records import TaskOutcome, TaskRecord
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.ports.batch_store import BatchClaim
from scrapejobs_shared.ports.job_store import Claimed, Page
from support.memory_dispatcher import memory_client

TASKS = 1_234


class PagingStore(MemoryJobStore):
    """Records the page size of every ``list_tasks`` call and the most results one returned."""

    def __init__(self) -> None:
        super().__init__()
        self.pages: list[int] = []

    async def list_tasks(
        self, job_id: str, page_size: int, page_token: str | None
    ) -> Page[TaskRecord]:
        self.pages.append(page_size)
        return await super().list_tasks(job_id, page_size, page_token)


@pytest.fixture
async def finished_job() -> tuple[PagingStore, MemoryTaskPublisher, str]:
    store, publisher = PagingStore(), MemoryTaskPublisher()
    urls = [f"http://shop.example/p/{n}" for n in range(TASKS)]
    async with memory_client(store, publisher=publisher) as client:
        body = {
            "urls": urls,
            "extract": {"title": {"css": "h1"}},
            "options": {"formats": ["metadata"]},
        }
        job_id = (await client.post("/v1/jobs", json=body)).json()["id"]
    now = datetime.now(UTC)
    for batch_id in store.batches[job_id]:  # held ones too: the workers release them
        claim = await store.claim_batch(
            BatchClaim(job_id, batch_id, now, now + timedelta(seconds=9))
        )
        assert isinstance(claim, Claimed)
        changes = [FinishTask(item.task_id, _outcome(item.index)) for item in claim.batch.items]
        await store.settle(claim.handle, changes, now)
    return store, publisher, job_id


def _outcome(index: int) -> TaskOutcome:
    if index % 7 == 0:
        return TaskOutcome(TaskStatus.FAILED, http_status=404, error="HTTP 404")
    data = {"title": f'T, "{index}"\n', "metadata": {"lang": "en", "n": index}, "tags": [index]}
    return TaskOutcome(TaskStatus.SUCCEEDED, http_status=200, data=data, elapsed_ms=index)


async def _api_results(client, job_id: str) -> list[dict[str, object]]:
    results: list[dict[str, object]] = []
    params: dict[str, object] = {"page_size": 1000}
    while True:
        page = (await client.get(f"/v1/jobs/{job_id}/results", params=params)).json()
        results += page["results"]
        if not page["next_page_token"]:
            return results
        params["page_token"] = page["next_page_token"]


async def test_jsonl_is_every_result_as_the_results_api_returns_it(finished_job) -> None:
    store, publisher, job_id = finished_job
    async with memory_client(store, publisher=publisher) as client:
        expected = await _api_results(client, job_id)
        store.pages.clear()
        response = await client.get(f"/v1/jobs/{job_id}/results:export")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/x-ndjson"
    disposition = f'attachment; filename="job-{job_id}-results.jsonl"'
    assert response.headers["content-disposition"] == disposition
    lines = response.text.splitlines()
    assert len(lines) == TASKS and [json.loads(line) for line in lines] == expected
    # paged: never more than one page of results asked for at once
    assert store.pages == [EXPORT_PAGE] * -(-TASKS // EXPORT_PAGE)


async def test_csv_is_every_result_flattened(finished_job) -> None:
    store, publisher, job_id = finished_job
    async with memory_client(store, publisher=publisher) as client:
        expected = await _api_results(client, job_id)
        store.pages.clear()
        response = await client.get(f"/v1/jobs/{job_id}/results:export", params={"format": "csv"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    assert response.headers["content-disposition"].endswith(f'"job-{job_id}-results.csv"')
    reader = csv.DictReader(io.StringIO(response.text, newline=""))
    assert reader.fieldnames == [
        *RESULT_COLUMNS,
        "data.title",
        "data.metadata.lang",
        "data.metadata.n",
        "data.tags",
        "other_data",
    ]
    rows = list(reader)
    assert len(rows) == TASKS
    for row, result in zip(rows, expected, strict=True):
        assert {name: row[name] for name in RESULT_COLUMNS} == {
            name: cell(result[name]) for name in RESULT_COLUMNS
        }
        data = result["data"]
        if data is None:
            assert row["data.title"] == row["data.tags"] == row["other_data"] == ""
            continue
        assert isinstance(data, dict)
        assert row["data.title"] == data["title"]
        assert row["data.metadata.n"] == str(data["metadata"]["n"])
        assert json.loads(row["data.tags"]) == data["tags"] and row["other_data"] == ""
    assert store.pages == [EXPORT_PAGE] * -(-TASKS // EXPORT_PAGE)


async def test_the_export_streams_a_page_before_reading_the_next(finished_job) -> None:
    """The CSV body is produced page by page: its header and first rows exist after one
    store read, and each further chunk costs exactly one more."""
    store, _publisher, job_id = finished_job
    export = await JobExport(store, lambda: datetime.now(UTC)).all_results(job_id, None)
    store.pages.clear()
    chunks = csv_chunks(export.job, export.pages)
    header = await anext(chunks)
    first_rows = await anext(chunks)
    assert store.pages == [EXPORT_PAGE]
    assert header.count(b"\r\n") == 1 and first_rows.count(b"\n") >= EXPORT_PAGE
    await anext(chunks)
    assert len(store.pages) == 2


async def test_unknown_job_is_404_and_bad_format_422(finished_job) -> None:
    store, publisher, job_id = finished_job
    async with memory_client(store, publisher=publisher) as client:
        missing = await client.get("/v1/jobs/nope/results:export", params={"format": "csv"})
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
        bad = await client.get(f"/v1/jobs/{job_id}/results:export", params={"format": "xml"})
        assert bad.status_code == 422 and bad.json()["error"]["field"] == "format"


async def test_a_job_without_results_exports_a_header_or_nothing() -> None:
    store = MemoryJobStore()
    async with memory_client(store) as client:
        job = (await client.post("/v1/jobs", json={"url": "http://a.example/"})).json()
        path = f"/v1/jobs/{job['id']}/results:export"
        assert (await client.get(path)).content == b""
        text = (await client.get(path, params={"format": "csv"})).text
    assert text == ",".join([*RESULT_COLUMNS, "other_data"]) + "\r\n"
