"""A monitor check's pages: asked for conditionally with what the last check kept, a page the
site says did not change (304, or the very body) ends unchanged: succeeded, counted, and no
result of its own; a page that did change keeps its new validators for the next check."""

from __future__ import annotations

from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.domain.jobspec import JobRequest, JobSpec
from scrapejobs_shared.domain.page_validators import PageValidators, body_digest
from scrapejobs_shared.domain.records import BatchItem, BatchRecord, JobRecord
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from support.worker_fakes import HTML, NOW, PerUrlFetcher, build_processor, push

URL = "http://a.example/"


async def conditional_job(
    store: MemoryJobStore, items: list[BatchItem], conditional: bool = True
) -> BatchRecord:
    request = JobRequest.model_validate({"url": URL, "extract": {"h": {"css": "h1::text"}}})
    spec = JobSpec.from_request(request, conditional=conditional)
    job = JobRecord("j", JobStatus.QUEUED, spec, NOW, NOW, NOW, total=len(items))
    batch = BatchRecord("j", "b", tuple(items), NOW, NOW)
    await store.create_job(job, [batch])
    return batch


async def test_unchanged_pages_are_counted_without_a_result_and_changed_ones_keep_validators() -> (
    None
):
    store = MemoryJobStore()
    etag, same, changed = (f"{URL}{name}" for name in ("etag", "same", "changed"))
    batch = await conditional_job(
        store,
        [
            BatchItem("t0", etag, validators=PageValidators(etag='"v1"', last_modified="Mon")),
            BatchItem("t1", same, index=1, validators=PageValidators(digest=body_digest(HTML))),
            BatchItem("t2", changed, index=2, validators=PageValidators(digest="0" * 64)),
        ],
    )
    fetcher = PerUrlFetcher({etag: [304], changed: [(200, {"etag": ' "v2" '})]})
    verdict = await build_processor(store, fetcher, lambda: NOW).handle_push(push(batch=batch))

    assert verdict.ack
    sent = {call.url: call.headers for call in fetcher.calls}
    assert sent[etag]["If-None-Match"] == '"v1"' and sent[etag]["If-Modified-Since"] == "Mon"
    assert "If-None-Match" not in sent[same]  # a digest alone asks unconditionally
    assert set(store.results["j"]) == {"t2"}  # the unchanged pages wrote no result
    result = store.results["j"]["t2"]
    assert result.status is TaskStatus.SUCCEEDED and result.data == {"h": "Hello"}
    assert result.validators == PageValidators('"v2"', None, body_digest(HTML))
    assert all(i.status is TaskStatus.SUCCEEDED for i in store.batches["j"]["b"].items)
    assert store.jobs["j"].status is JobStatus.COMPLETED
    assert (await store.count_tasks("j"))[TaskStatus.SUCCEEDED] == 3


async def test_a_304_to_a_page_asked_unconditionally_is_no_success() -> None:
    store = MemoryJobStore()
    batch = await conditional_job(store, [BatchItem("t0", URL, validators=PageValidators())])
    processor = build_processor(store, PerUrlFetcher({URL: [304]}), lambda: NOW)
    assert (await processor.handle_push(push(batch=batch))).ack
    assert store.results["j"]["t0"].status is TaskStatus.FAILED


async def test_a_plain_job_keeps_no_validators() -> None:
    store = MemoryJobStore()
    batch = await conditional_job(store, [BatchItem("t0", URL)], conditional=False)
    processor = build_processor(store, PerUrlFetcher({}), lambda: NOW)
    assert (await processor.handle_push(push(batch=batch))).ack
    assert store.results["j"]["t0"].validators is None
