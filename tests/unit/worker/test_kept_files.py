"""The renderer's files are kept in the tenant's file store before the page is read, and the
response carries their URLs, not their bytes; a store that does not answer retries the task
without blaming the host."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from scrapejobs_shared.adapters.memory.file_store import MemoryFileStore
from scrapejobs_shared.domain.browser_work import BrowserWork, FileDestination
from scrapejobs_shared.extraction.browser_result import BrowserResult, PageFile
from scrapejobs_shared.ports.dependency_unavailable import DependencyUnavailable
from scrapejobs_shared.ports.fetcher import FetchRequest, FetchResponse
from scrapejobs_shared.ports.file_store import StoredFile
from scrapejobs_worker.rendering.kept_files import FileStoreUnavailable, KeptFiles

NOW = datetime(2026, 11, 29, tzinfo=UTC)
SHOT = PageFile("screenshot.png", "image/png", b"\x89PNG image")
WHERE = BrowserWork(FileDestination("team-a", "job1", "task1", NOW + timedelta(days=30)))


class Rendered:
    def __init__(self, browser: BrowserResult | None) -> None:
        self.browser = browser

    async def fetch(self, request: FetchRequest) -> FetchResponse:
        return FetchResponse(request.url, 200, {}, b"<h1>x</h1>", 5, browser=self.browser)

    async def aclose(self) -> None:
        return None


class Down(MemoryFileStore):
    async def put(self, key: str, body: bytes, content_type: str, expire_at: datetime) -> None:
        raise DependencyUnavailable("Cloud Storage", 30)


async def test_files_are_kept_under_the_tenant_and_answered_as_urls() -> None:
    store = MemoryFileStore()
    kept = KeptFiles(Rendered(BrowserResult(files=(SHOT,))), store, "https://api.example/")
    response = await kept.fetch(FetchRequest("http://a.test/", browser=WHERE))
    url = "https://api.example/v1/jobs/job1/files/task1/screenshot.png"
    assert response.browser == BrowserResult(urls={"screenshot.png": url})
    assert response.browser.screenshots == 1 and response.browser.url_of("screenshot") == url
    assert await store.get("team-a/job1/task1/screenshot.png", NOW) == StoredFile(
        SHOT.body, "image/png"
    )


async def test_a_response_without_files_passes_and_without_a_store_they_are_dropped() -> None:
    plain = KeptFiles(Rendered(None), MemoryFileStore(), "http://d")
    assert (await plain.fetch(FetchRequest("http://a.test/"))).browser is None
    nowhere = KeptFiles(Rendered(BrowserResult(files=(SHOT,))), None, "http://d")
    assert (await nowhere.fetch(FetchRequest("http://a.test/", browser=WHERE))).browser == (
        BrowserResult()
    )


async def test_a_store_that_does_not_answer_retries_the_task_not_blaming_the_host() -> None:
    kept = KeptFiles(Rendered(BrowserResult(files=(SHOT,))), Down(), "http://d")
    with pytest.raises(FileStoreUnavailable) as raised:
        await kept.fetch(FetchRequest("http://a.test/", browser=WHERE))
    assert raised.value.transient and not raised.value.host_fault
    assert raised.value.reason == "file_store_unavailable"
