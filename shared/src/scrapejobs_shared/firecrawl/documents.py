"""A task's result as a Firecrawl ``Document``: its formats under Firecrawl's names (the format
registry's), and its
``metadata`` (the page's own, Open Graph and Dublin Core tags in Firecrawl's camelCase, the
requested and final URL, the HTTP status, the content type, a document's page count
(``numPages``), author and dates, whether the page was reused from the
page cache (``cacheState``, ``cachedAt``), ``tlsVerified: false`` when the site's certificate
failed verification and ``skipTlsVerification`` let the page through, ``proxyUsed`` (the tier
of the proxy a page came through: ``basic``, ``stealth``), and the error of a failed page)."""

from __future__ import annotations

import re
from typing import Any

from scrapejobs_shared.domain.records import TaskRecord
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.extraction.formats import FORMATS

JSON_FIELD = "json"  # where the json format's answer goes in a result's data
PAGES = "pages"
PAGE_FACTS = ("title", "description", "language", "keywords", "robots", "favicon")
# what a document (PDF) says of itself, by Firecrawl's names
DOCUMENT_FACTS = {
    "page_count": "numPages",
    "author": "author",
    "creator": "creator",
    "producer": "producer",
    "created": "publishedTime",
    "modified": "modifiedTime",
}
LISTED = frozenset({"ogLocaleAlternate"})  # metadata Firecrawl gives as a list


def document(task: TaskRecord) -> dict[str, Any]:
    """The ``Document`` of ``task`` (its data holds only the formats the job asked for)."""
    data = task.data or {}
    found: dict[str, Any] = {
        f.firecrawl: f.document(data[f.name]) for f in FORMATS if f.firecrawl and f.name in data
    }
    if JSON_FIELD in data:
        found["json"] = data[JSON_FIELD]
    if PAGES in data:  # a document's pages (a pdf parser's pages: true)
        found["pages"] = FORMATS[PAGES].document(data[PAGES])
    found["metadata"] = metadata(task)
    return found


def metadata(task: TaskRecord) -> dict[str, Any]:
    page = (task.data or {}).get("metadata")
    page = page if isinstance(page, dict) else {}
    found: dict[str, Any] = {name: page[name] for name in PAGE_FACTS if page.get(name) is not None}
    found |= {name: page[key] for key, name in DOCUMENT_FACTS.items() if page.get(key) is not None}
    for tags in (page.get("open_graph"), page.get("dublin_core")):
        if isinstance(tags, dict):
            for name, value in tags.items():
                key = camel_tag(name)
                found.setdefault(key, [value] if key in LISTED else value)
    found |= {
        "sourceURL": task.url,
        "url": page.get("url") or task.url,
        "statusCode": task.http_status,
        "contentType": page.get("content_type"),
        "scrapeId": task.id,
    }
    if task.status is TaskStatus.SUCCEEDED and task.fetched_at is not None:
        # a page fetched before its task existed was reused from the page cache
        reused = task.fetched_at < task.created_at
        found["cacheState"] = "hit" if reused else "miss"
        if reused:
            found["cachedAt"] = task.fetched_at.isoformat()
    if task.tls_unverified:  # skipTlsVerification let a certificate that failed pass
        found["tlsVerified"] = False
    if proxied := task.metered.proxied():
        found["proxyUsed"] = next(iter(proxied))
    if task.status is not TaskStatus.SUCCEEDED and task.error:
        found["error"] = task.error
    return found


def camel_tag(name: str) -> str:
    """``og:site_name`` -> ``ogSiteName``, ``dcterms.created`` -> ``dcTermsCreated``,
    ``dc.date.created`` -> ``dcDateCreated``."""
    head = re.split(r"[:.]", name, maxsplit=1)[0]
    rest = name[len(head) + 1 :]
    prefix = {"og": "og", "dc": "dc", "dcterms": "dcTerms"}.get(head, head)
    return prefix + "".join(part.capitalize() for part in re.split(r"[:._]", rest) if part)
