"""The renderer's files kept before the page is read: a ``Fetcher`` around the renderer that
writes each file a response carries (its screenshot) to the tenant's file store, at the
request's ``BrowserWork.files`` (``{tenant}/{job}/{task}/{name}``, until the job expires), and
answers the response with their URLs in place of their bytes: the extraction, in processes of
its own, receives names and URLs. A URL is the dispatcher's, which serves the file to the
job's tenant only (``GET /v1/jobs/{job}/files/{task}/{name}``).

A store that does not answer makes the fetch transient (the task is tried again, the host not
blamed). Without a store (no ``SCRAPEJOBS_FILES_BUCKET``) the files are dropped, and the
screenshot format says none was kept."""

from __future__ import annotations

import logging
from dataclasses import replace

from scrapejobs_shared.ports.dependency_unavailable import DependencyUnavailable
from scrapejobs_shared.ports.fetcher import (
    Fetcher,
    FetchRequest,
    FetchResponse,
    TransientFetchError,
)
from scrapejobs_shared.ports.file_store import FileStore, file_key

log = logging.getLogger(__name__)


class FileStoreUnavailable(TransientFetchError):
    reason = "file_store_unavailable"
    host_fault = False


class KeptFiles:
    def __init__(self, inner: Fetcher, store: FileStore | None, api_url: str) -> None:
        """``api_url``: the dispatcher's URL as callers reach it (SCRAPEJOBS_API_URL)."""
        self._inner = inner
        self._store = store
        self._api_url = api_url.rstrip("/")

    async def fetch(self, request: FetchRequest) -> FetchResponse:
        response = await self._inner.fetch(request)
        browser, work = response.browser, request.browser
        if browser is None or not browser.files:
            return response
        if self._store is None or work is None:
            log.warning("page files dropped: no file store", extra={"url": request.url})
            return replace(response, browser=replace(browser, files=()))
        where, urls = work.files, {}
        for made in browser.files:
            key = file_key(where.tenant, where.job_id, where.task_id, made.name)
            try:
                await self._store.put(key, made.body, made.content_type, where.expire_at)
            except DependencyUnavailable as exc:
                raise FileStoreUnavailable(
                    f"the page's {made.name} could not be kept: {exc}"
                ) from exc
            path = f"/v1/jobs/{where.job_id}/files/{where.task_id}/{made.name}"
            urls[made.name] = self._api_url + path
        return replace(response, browser=replace(browser, files=(), urls=urls))

    async def aclose(self) -> None:
        await self._inner.aclose()
