"""Documents read apart from pages: a response that is a document (PDF, Word... :
``extraction/content_kind.py``, by its type or its first bytes) goes to extraction processes of
its own, which take the CPU only when nothing else wants it (processes/limits.run_in_background);
every other page to the page processes. Reading a 10-page PDF takes ten to twenty times a web
page's CPU: a job of PDFs beside a job of pages, sharing processes and cores, halved the pages'
throughput (bench/README.md, "D"); apart, the kernel gives the pages the CPU first and the
documents what is left (and pages never wait behind a document in a process's queue); while
pages are extracted, the documents' processes are paused but for a share of the time
(documents_yield.py). URLs that
name documents travel in a lane of their own besides (delivery/url_lanes.py).

The documents' processes start with the first document: a worker that never reads one (most
of a pages lane's) does not hold their memory (about 100 MB for the default one, bench/README.md).
"""

from __future__ import annotations

from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.extraction.content_kind import ContentKind, classify_content
from scrapejobs_shared.outcomes.page_outcome import ExtractedPage
from scrapejobs_shared.ports.fetcher import FetchResponse
from scrapejobs_worker.extraction.documents_yield import DocumentsYield
from scrapejobs_worker.extraction.extraction_processes import ExtractionProcesses


class DocumentsApart:
    """The page extraction port: pages to ``pages``, documents to ``documents``, which yield
    the CPU to pages (documents_yield.py)."""

    def __init__(self, pages: ExtractionProcesses, documents: ExtractionProcesses) -> None:
        self.pages = pages
        self.documents = documents
        self.yielding = DocumentsYield(documents.working_pids)
        self._documents_started = False

    async def start(self) -> None:
        await self.pages.start()

    async def close(self) -> None:
        await self.yielding.close()
        await self.documents.close()
        await self.pages.close()

    async def extract(self, response: FetchResponse, spec: JobSpec) -> ExtractedPage:
        kind = classify_content(response.content_type, response.body).kind
        if kind is not ContentKind.DOCUMENT:
            self.yielding.page_started()
            try:
                return await self.pages.extract(response, spec)
            finally:
                self.yielding.page_ended()
        if not self._documents_started:
            self._documents_started = True
            await self.documents.start()
            self.yielding.start()
        return await self.documents.extract(response, spec)
