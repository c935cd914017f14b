"""The lane a task travels in, by its URL: a URL that names a document by its file extension
(``/report.pdf``, ``/prices.xlsx``: extraction.document_types) goes to the documents lane, the
others to their job's lane.

A document costs tens of pages' CPU and memory to read and its download is larger; in the
lane of the job's pages, its batches would hold the deliveries the pages wait for (the local
emulator pushes two at a time per subscription; on Cloud Run a lane's pushes share its
instances). In a lane of their own, documents take their own deliveries, and a deployment may
give them a worker service of their own (Terraform ``dedicated_lane_workers``, with the memory
documents need) while plain pages keep theirs (bench/README.md, D).

Only the priority lanes hand documents on: a rendered job's documents stay in the render lane
(its browser service fetches them), and the processing lane is never a job's. A document
recognised only once fetched (no extension, or a type the URL did not say) is read where it was
fetched: the fetch is not made twice to move it.
"""

from __future__ import annotations

from scrapejobs_shared.domain.lanes import DOCUMENTS_LANE
from scrapejobs_shared.extraction.document_types import BY_EXTENSION

PRIORITY_LANES = frozenset({"high", "normal", "low"})


def names_document(url: str) -> bool:
    """Whether the URL's path ends in a document's file extension (case aside). The URLs were
    validated at submission; read by hand, as a job's URLs are planned by the ten thousand
    (urlsplit doubled the planning's time)."""
    before_query = url.partition("#")[0].partition("?")[0]
    path_at = before_query.find("/", before_query.find("//") + 2)
    if path_at < 0:
        return False  # no path: "https://files.pdf" is a host
    name = before_query[path_at:].rpartition("/")[2]
    dot = name.rfind(".")
    return dot > 0 and name[dot:].lower() in BY_EXTENSION


def lane_for(url: str, job_lane: str) -> str:
    """The lane of a task of ``url`` in a job whose lane is ``job_lane``."""
    if job_lane in PRIORITY_LANES and names_document(url):
        return DOCUMENTS_LANE
    return job_lane
