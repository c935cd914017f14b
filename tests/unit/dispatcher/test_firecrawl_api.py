"""The Firecrawl-compatible /v2 API over the in-memory adapters: what a batch becomes (one
native job with the options translated), its status with Documents page by page, its errors,
cancel, and Firecrawl's error shape for everything that fails (the SDK itself runs against the
emulator stack in tests/e2e/test_firecrawl_sdk.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_dispatcher.tenants.api_keys import hash_api_key
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.delivery.completion import complete_if_done
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.records import TaskOutcome, TaskRecord
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.firecrawl.documents import camel_tag, document
from scrapejobs_shared.ports.batch_store import BatchClaim, Claimed
from support.memory_dispatcher import memory_client

NOW = datetime(2026, 11, 25, 12, tzinfo=UTC)
PAGE_DATA = {
    "markdown": "# Hello",
    "metadata": {
        "title": "Hello",
        "description": "A page",
        "language": "en",
        "open_graph": {"og:title": "Hello OG", "og:site_name": "Site"},
        "dublin_core": {"dcterms.created": "2024-05-01"},
        "keywords": None,
        "url": "https://a.example/final",
        "content_type": "text/html",
    },
}


async def _settle_all(
    store: MemoryJobStore, job_id: str, outcomes: list[TaskOutcome], batches: int | None = None
) -> None:
    for batch_id, batch in list(store.batches[job_id].items())[:batches]:
        claim = await store.claim_batch(
            BatchClaim(job_id, batch_id, NOW, NOW + timedelta(seconds=30))
        )
        if not isinstance(claim, Claimed):
            continue  # settled by an earlier call
        changes = [
            FinishTask(item.task_id, outcomes[item.index % len(outcomes)]) for item in batch.items
        ]
        await store.settle(claim.handle, changes, NOW, None)
    await complete_if_done(store, job_id, lambda: NOW)


async def test_a_batch_becomes_one_job_with_its_options_translated() -> None:
    store = MemoryJobStore()
    body = {
        "urls": ["https://a.example/1", "https://a.example/2"],
        "formats": ["markdown", "html", "rawHtml", {"type": "links"}],
        "onlyMainContent": False,
        "includeTags": ["article"],
        "excludeTags": [".ad"],
        "headers": {"Accept-Language": "de"},
        "timeout": 20000,
        "waitFor": 500,
        "mobile": True,
        "maxConcurrency": 3,
        "maxAge": 14400000,
        "storeInCache": True,
        "blockAds": True,
        "removeBase64Images": True,
        "fastMode": False,
        "origin": "python-sdk@4.55.0",
    }
    async with memory_client(store) as client:
        answer = await client.post("/v2/batch/scrape", json=body)
        assert answer.status_code == 200, answer.text
        started = answer.json()
        assert started["success"] is True and started["invalidURLs"] is None
        assert started["url"] == f"http://test/v2/batch/scrape/{started['id']}"
    [job] = store.jobs.values()
    assert job.id == started["id"] and job.labels == {"firecrawl": "batch"}
    options = job.spec.options
    assert options.formats == ["metadata", "markdown", "clean_html", "html", "links"]
    assert options.content.main_only is False
    assert options.content.include == ["article"] and options.content.exclude == [".ad"]
    assert options.headers == {"Accept-Language": "de"} and options.timeout_s == 20
    assert options.render is not None and options.render.wait_ms == 500
    assert options.render.viewport.width == 390 and options.per_host_concurrency == 3


async def test_attributes_and_summary_are_registry_formats_end_to_end_of_the_translation() -> None:
    store = MemoryJobStore()
    attributes = {"type": "attributes", "selectors": [{"selector": "a", "attribute": "href"}]}
    body = {"urls": ["https://a.example/1"], "formats": ["markdown", attributes, "summary"]}
    async with memory_client(
        store, DispatcherSettings(auth_mode="none", ai_provider="openai")
    ) as client:
        answer = await client.post("/v2/batch/scrape", json=body)
        assert answer.status_code == 200, answer.text
        mixed = {"url": "https://a.example/", "formats": ["summary", {"type": "json"}]}
        refused = await client.post("/v2/scrape", json=mixed)
    assert refused.status_code == 400 and refused.json()["field"] == "formats", refused.text
    [job] = store.jobs.values()
    assert job.spec.options.formats[:2] == ["metadata", "markdown"]
    assert job.spec.options.formats[2].model_dump() == attributes
    assert job.spec.options.formats[3] == "summary"
    [stage] = job.spec.pipeline
    assert stage.name == "ai" and stage.ai.into == "summary"
    found = [{"selector": "a", "attribute": "href", "values": ["/x"]}]
    data = {"markdown": "# M", "attributes": found, "summary": {"text": "About M."}}
    task = TaskRecord(
        id="t", job_id=job.id, url="https://a.example/1", status=TaskStatus.SUCCEEDED,
        data=data, created_at=NOW, updated_at=NOW, expire_at=NOW,
    )  # fmt: skip
    doc = document(task)
    assert doc["attributes"] == found and doc["summary"] == "About M."


async def test_status_pages_through_the_documents_of_pages_that_succeeded() -> None:
    store = MemoryJobStore()
    urls = [f"https://a.example/{n}" for n in range(150)]
    async with memory_client(store) as client:
        started = (await client.post("/v2/batch/scrape", json={"urls": urls})).json()
        batch = f"/v2/batch/scrape/{started['id']}"
        first = (await client.get(batch)).json()
        assert first["status"] == "scraping" and first["total"] == 150
        assert first["completed"] == 0 and first["data"] == []

        ok = TaskOutcome(TaskStatus.SUCCEEDED, http_status=200, data=PAGE_DATA, elapsed_ms=9)
        failed = TaskOutcome(TaskStatus.FAILED, http_status=None, error="robots_disallowed: x")
        await _settle_all(store, started["id"], [ok], batches=1)
        running = (await client.get(batch)).json()
        # running: no documents in the answer (the SDK would re-read them all on every poll),
        # a link to those finished so far
        assert running["status"] == "scraping" and running["data"] == []
        assert 0 < running["completed"] < 150 and running["next"].endswith("?next=0")
        so_far = (await client.get(running["next"])).json()
        assert len(so_far["data"]) == min(running["completed"], 100)

        await _settle_all(store, started["id"], [ok, ok, failed])
        documents: list[dict[str, Any]] = []
        page: dict[str, Any] = (await client.get(batch)).json()
        assert page["status"] == "completed" and page["completed"] == 150
        assert page["expiresAt"]
        credits = page["creditsUsed"]
        while True:
            documents += page["data"]
            if not page["next"]:
                break
            assert page["next"].startswith(f"http://test{batch}?next=")
            page = (await client.get(page["next"])).json()
        results = store.results[started["id"]].values()
        succeeded = [t for t in results if t.status is TaskStatus.SUCCEEDED]
        assert len(documents) == len(succeeded) and 100 < len(succeeded) < 150
        assert credits == len(succeeded)  # a credit a page fetched: none refused by robots.txt
        assert documents[0]["markdown"] == "# Hello"
        metadata = documents[0]["metadata"]
        assert metadata["ogTitle"] == "Hello OG" and metadata["ogSiteName"] == "Site"
        assert metadata["dcTermsCreated"] == "2024-05-01" and metadata["statusCode"] == 200
        assert metadata["url"] == "https://a.example/final"
        assert metadata["sourceURL"].startswith("https://a.example/")

        errors = (await client.get(f"{batch}/errors")).json()
        assert errors["errors"] == [] and len(errors["robotsBlocked"]) == 150 - len(succeeded)


async def test_cancel_answers_cancelled_and_unknown_ids_are_404_in_firecrawl_s_shape() -> None:
    store = MemoryJobStore()
    async with memory_client(store) as client:
        started = await client.post("/v2/batch/scrape", json={"urls": ["https://a.example/"]})
        batch_id = started.json()["id"]
        cancelled = await client.delete(f"/v2/batch/scrape/{batch_id}")
        assert cancelled.json() == {"success": True, "status": "cancelled"}
        for path in ("/v2/batch/scrape/0123abcd", "/v2/batch/scrape/0123abcd/errors"):
            missing = await client.get(path)
            assert missing.status_code == 404
            assert missing.json()["success"] is False and "not found" in missing.json()["error"]
        native = (await client.post("/v1/jobs", json={"url": "https://a.example/"})).json()
        assert (await client.get(f"/v2/batch/scrape/{native['id']}")).status_code == 404
        nowhere = await client.get("/v2/no-such-thing")
        assert nowhere.status_code == 404 and nowhere.json()["success"] is False


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"urls": ["https://a.example/"], "actions": [{"type": "click"}]}, "actions"),
        # screenshots need a file store, which this deployment has not (a rule of the
        # deployment's, checked on the native job, named as Firecrawl names the field)
        ({"urls": ["https://a.example/"], "formats": ["screenshot"]}, "formats"),
        ({"urls": ["https://a.example/"], "formats": ["screenshot@page"]}, "formats[0]"),
        ({"urls": ["https://a.example/"], "skipTlsVerification": 1}, "skipTlsVerification"),
        ({"urls": ["https://a.example/"], "location": {"country": "DE"}}, "location"),
        ({"urls": ["https://a.example/"], "parsers": [{"type": "pdf", "mode": "ink"}]}, "parsers"),
        ({"urls": ["https://a.example/"], "parsers": [{"type": "image", "x": 1}]}, "parsers"),
        ({"urls": ["https://a.example/"], "parsers": [{"type": "pdf", "blocks": True}]}, "parsers"),
        ({"urls": ["https://a.example/"], "parsers": [{"type": "pdf", "maxPages": 0}]}, "parsers"),
        ({"urls": ["https://a.example/"], "parsers": ["docx"]}, "parsers[0]"),
        ({"urls": ["https://a.example/"], "proxy": "stealth"}, "proxy"),
        ({"urls": ["https://a.example/"], "timeout": 0}, "timeout"),
        ({"urls": ["https://a.example/"], "whatever": 1}, "whatever"),
        ({"urls": ["https://a.example/"], "webhook": "ftp://hook.example/"}, "webhook"),
        (
            {
                "urls": ["https://a.example/"],
                "webhook": {"url": "https://h.example/", "events": ["x"]},
            },
            "webhook",
        ),
        (
            {
                "urls": ["https://a.example/"],
                "webhook": {"url": "https://h.example/", "headers": {"X-Firecrawl-Signature": "x"}},
            },
            "webhook",
        ),
        ({"urls": ["https://a.example/", "ftp://x"]}, "urls[1]"),
        ({"urls": ["https://a.example/"], "headers": {"Host": "x"}}, "headers"),
        ({"urls": []}, "urls"),
    ],
)
async def test_what_cannot_be_honoured_is_a_400_naming_the_field(
    body: dict[str, Any], field: str
) -> None:
    store = MemoryJobStore()
    async with memory_client(store) as client:
        answer = await client.post("/v2/batch/scrape", json=body)
    assert answer.status_code == 400, answer.text
    error = answer.json()
    assert error["success"] is False and error["field"].startswith(field), error
    assert error["error"].startswith(field), error
    assert not store.jobs


# What firecrawl-py 3.0-4.54 sends on every scrape with options (its validation.py defaults)
OLD_SDK_DEFAULTS = {
    "onlyMainContent": True,
    "mobile": False,
    "skipTlsVerification": True,
    "removeBase64Images": True,
    "fastMode": False,
    "blockAds": True,
    "maxAge": 14400000,
    "storeInCache": True,
    "origin": "python-sdk@3.0.2",
}


@pytest.mark.parametrize(
    ("sent", "verify_tls"),
    [({}, False), ({"skipTlsVerification": True}, False), ({"skipTlsVerification": False}, True)],
)
async def test_skip_tls_verification_is_honoured_as_firecrawl_honours_it(
    sent: dict[str, Any], verify_tls: bool
) -> None:
    store = MemoryJobStore()
    async with memory_client(store) as client:
        answer = await client.post(
            "/v2/batch/scrape", json={"urls": ["https://a.example/"], **sent}
        )
        assert answer.status_code == 200, answer.text
    [job] = store.jobs.values()
    assert job.spec.options.verify_tls is verify_tls  # unset: Firecrawl's default, true


async def test_the_old_sdks_defaults_are_accepted_everywhere_they_are_sent() -> None:
    store = MemoryJobStore()
    async with memory_client(store) as client:
        scrape_options = {"formats": ["markdown"], **OLD_SDK_DEFAULTS}
        del scrape_options["origin"]
        crawl = {"url": "https://a.example/", "scrapeOptions": scrape_options, "limit": 2}
        for path, body in (
            ("/v2/batch/scrape", {"urls": ["https://a.example/"], **OLD_SDK_DEFAULTS}),
            ("/v2/crawl", crawl | {"origin": "python-sdk@3.0.2", "zeroDataRetention": False}),
        ):
            answer = await client.post(path, json=body)
            assert answer.status_code == 200, (path, answer.text)
    assert all(not job.spec.options.verify_tls for job in store.jobs.values())


async def test_a_deployment_that_always_verifies_refuses_skipping_naming_its_setting() -> None:
    store = MemoryJobStore()
    settings = DispatcherSettings(auth_mode="none", allow_unverified_tls=False)
    async with memory_client(store, settings) as client:
        refused = await client.post(
            "/v2/batch/scrape", json={"urls": ["https://a.example/"], "skipTlsVerification": True}
        )
        assert refused.status_code == 400
        assert refused.json()["field"] == "skipTlsVerification"
        assert "SCRAPEJOBS_ALLOW_UNVERIFIED_TLS" in refused.json()["error"]
        native = await client.post(
            "/v1/jobs", json={"url": "https://a.example/", "options": {"verify_tls": False}}
        )
        assert native.status_code == 422
        assert native.json()["error"]["field"] == "options.verify_tls"
        assert "SCRAPEJOBS_ALLOW_UNVERIFIED_TLS" in native.json()["error"]["message"]
        assert not store.jobs
        # unset there means verified
        assert (
            await client.post("/v2/batch/scrape", json={"urls": ["https://a.example/"]})
        ).is_success
    [job] = store.jobs.values()
    assert job.spec.options.verify_tls is True


async def test_the_deployment_may_render_what_shows_nothing_as_firecrawl_renders() -> None:
    store = MemoryJobStore()
    settings = DispatcherSettings(auth_mode="none", firecrawl_render="auto")
    async with memory_client(store, settings) as client:
        for body in ({}, {"waitFor": 300}):
            answer = await client.post(
                "/v2/batch/scrape", json={"urls": ["https://a.example/"], **body}
            )
            assert answer.status_code == 200, answer.text
    auto, waited = (job.spec.options.render for job in store.jobs.values())
    assert auto is not None and auto.when == "auto"
    assert waited is not None and waited.when == "always" and waited.wait_ms == 300
    plain = MemoryJobStore()
    async with memory_client(plain) as client:  # the default: plain
        await client.post("/v2/batch/scrape", json={"urls": ["https://a.example/"]})
    assert [job.spec.options.render for job in plain.jobs.values()] == [None]


async def test_a_webhook_is_a_native_one_in_firecrawls_shape() -> None:
    store = MemoryJobStore()
    hook = {"url": "https://h.example/in", "metadata": {"team": "a"}, "events": ["page", "failed"]}
    async with memory_client(store) as client:
        plain = await client.post(
            "/v2/batch/scrape",
            json={"urls": ["https://a.example/"], "webhook": "https://h.example/"},
        )
        chosen = await client.post("/v2/crawl", json={"url": "https://a.example/", "webhook": hook})
    jobs = {job.id: job for job in store.jobs.values()}
    everything = jobs[plain.json()["id"]].spec.webhook
    assert everything is not None and everything.shape == "firecrawl"
    assert everything.events == [
        "job.started",
        "task.finished",
        "job.completed",
        "job.failed",
        "job.cancelled",
    ]
    some = jobs[chosen.json()["id"]].spec.webhook
    assert some is not None and some.metadata == {"team": "a"}
    assert some.events == ["task.finished", "job.failed", "job.cancelled"]


async def test_invalid_urls_can_be_left_out_and_listed() -> None:
    store = MemoryJobStore()
    body = {"urls": ["https://a.example/", "not a url"], "ignoreInvalidURLs": True}
    async with memory_client(store) as client:
        started = (await client.post("/v2/batch/scrape", json=body)).json()
    assert started["invalidURLs"] == ["not a url"]
    [job] = store.jobs.values()
    assert job.total == 1


async def test_the_api_key_is_taken_as_a_bearer_token() -> None:
    settings = DispatcherSettings(
        auth_mode="api_key", api_key_hashes=hash_api_key("secret-key"), dashboard_cache_s=0
    )
    async with memory_client(MemoryJobStore(), settings) as client:
        body = {"urls": ["https://a.example/"]}
        refused = await client.post("/v2/batch/scrape", json=body)
        assert refused.status_code == 401 and refused.json()["success"] is False
        wrong = {"Authorization": "Bearer nope"}
        assert (await client.post("/v2/batch/scrape", json=body, headers=wrong)).status_code == 401
        right = {"Authorization": "Bearer secret-key"}
        answer = await client.post("/v2/batch/scrape", json=body, headers=right)
        assert answer.status_code == 200, answer.text
        native = await client.get("/v1/jobs", headers=right)  # the same key serves /v1
        assert native.status_code == 200


@pytest.mark.parametrize(
    ("parsers", "documents", "pages"),
    [
        (None, {"max_pages": 2000, "page_markers": False, "read": True, "ocr": "auto"}, False),
        (["pdf"], {"max_pages": 2000, "page_markers": False, "read": True}, False),
        (["image"], {"read": True, "ocr": "auto"}, False),
        (["pdf", {"type": "image"}], {"read": True, "ocr": "auto"}, False),
        ([{"type": "pdf", "mode": "ocr"}, "image"], {"read": True, "ocr": "ocr"}, False),
        ([], {"max_pages": 2000, "page_markers": False, "read": False}, False),
        (
            [{"type": "pdf", "mode": "fast", "maxPages": 3, "pages": True, "pageMarkers": True}],
            {"max_pages": 3, "page_markers": True, "read": True, "ocr": "fast"},
            True,
        ),
        ([{"type": "pdf", "mode": "auto", "blocks": False}], {"read": True}, False),
    ],
)
async def test_parsers_say_how_the_jobs_documents_are_read(
    parsers: list[Any] | None, documents: dict[str, Any], pages: bool
) -> None:
    store = MemoryJobStore()
    body: dict[str, Any] = {"urls": ["https://a.example/report.pdf"]}
    if parsers is not None:
        body["parsers"] = parsers
    async with memory_client(store) as client:
        answer = await client.post("/v2/batch/scrape", json=body)
        assert answer.status_code == 200, answer.text
    [job] = store.jobs.values()
    options = job.spec.options
    assert documents.items() <= options.documents.model_dump().items()
    assert ("pages" in options.formats) is pages


def test_a_documents_pages_and_facts_are_in_firecrawls_shape() -> None:
    data = {
        "markdown": "# Report\n\n---\n\n<!-- page 2 -->\n\nMore",
        "pages": [
            {"page_number": 1, "markdown": "# Report"},
            {"page_number": 2, "markdown": "More"},
        ],
        "metadata": {
            "title": "Report",
            "author": "Ann",
            "page_count": 2,
            "created": "2024-05-01T10:00:00+00:00",
            "url": "https://a.example/report.pdf",
            "content_type": "application/pdf",
        },
    }
    task = TaskRecord(
        id="t", job_id="j", url="https://a.example/report.pdf", status=TaskStatus.SUCCEEDED,
        data=data, created_at=NOW, updated_at=NOW, expire_at=NOW, http_status=200,
    )  # fmt: skip
    doc = document(task)
    assert doc["pages"] == [
        {"pageNumber": 1, "markdown": "# Report"},
        {"pageNumber": 2, "markdown": "More"},
    ]
    metadata = doc["metadata"]
    assert metadata["numPages"] == 2 and metadata["author"] == "Ann"
    assert metadata["title"] == "Report" and metadata["contentType"] == "application/pdf"
    assert metadata["publishedTime"] == "2024-05-01T10:00:00+00:00"


def test_tags_are_named_as_firecrawl_names_them() -> None:
    assert camel_tag("og:site_name") == "ogSiteName"
    assert camel_tag("og:locale:alternate") == "ogLocaleAlternate"
    assert camel_tag("dcterms.created") == "dcTermsCreated"
    assert camel_tag("dc.date.created") == "dcDateCreated"


def test_a_failed_page_s_document_says_why() -> None:
    task = TaskRecord(
        job_id="j",
        id="t",
        url="https://a.example/gone",
        status=TaskStatus.FAILED,
        created_at=NOW,
        updated_at=NOW,
        expire_at=NOW,
        http_status=404,
        error="http_404: not found",
    )
    assert document(task) == {
        "metadata": {
            "sourceURL": "https://a.example/gone",
            "url": "https://a.example/gone",
            "statusCode": 404,
            "contentType": None,
            "scrapeId": "t",
            "error": "http_404: not found",
        }
    }


async def test_a_crawl_becomes_one_crawl_job_and_is_listed_while_active() -> None:
    store = MemoryJobStore()
    body = {
        "url": "https://docs.example/guide",
        "includePaths": ["^/guide/"],
        "excludePaths": ["/old/"],
        "maxDiscoveryDepth": 3,
        "limit": 50,
        "allowSubdomains": True,
        "ignoreQueryParameters": True,
        "delay": 0.5,
        "maxConcurrency": 2,
        "ignoreRobotsTxt": False,
        "deduplicateSimilarURLs": True,
        "scrapeOptions": {"formats": ["markdown", "links"], "onlyMainContent": False},
    }
    async with memory_client(store) as client:
        answer = await client.post("/v2/crawl", json=body)
        assert answer.status_code == 200, answer.text
        started = answer.json()
        assert started["url"] == f"http://test/v2/crawl/{started['id']}"
        active = (await client.get("/v2/crawl/active")).json()
        assert active["success"] is True
        assert active["crawls"] == [
            {"id": started["id"], "teamId": "", "url": body["url"], "options": None}
        ]
        status = (await client.get(f"/v2/crawl/{started['id']}")).json()
        assert status["status"] == "scraping" and status["total"] == 1
        # a crawl is not a batch, nor a batch a crawl
        assert (await client.get(f"/v2/batch/scrape/{started['id']}")).status_code == 404
        whole = {"url": "https://docs.example/guide", "crawlEntireDomain": True}
        second = (await client.post("/v2/crawl", json=whole)).json()
    job = store.jobs[started["id"]]
    crawl = job.spec.crawl
    assert crawl is not None and job.labels == {"firecrawl": "crawl"}
    assert (crawl.max_depth, crawl.max_pages) == (3, 50)
    assert crawl.include == ["^/guide/"] and crawl.exclude == ["/old/"]
    assert crawl.allow_subdomains and crawl.ignore_query and crawl.under_start_path
    options = job.spec.options
    assert options.per_host_rps == 2.0 and options.per_host_concurrency == 2
    assert options.respect_robots and options.formats == ["metadata", "markdown", "links"]
    assert options.content.main_only is False
    defaults = store.jobs[second["id"]].spec.crawl
    assert defaults is not None and not defaults.under_start_path
    assert (defaults.max_depth, defaults.max_pages) == (20, 10_000)
    assert defaults.sitemap == "include"  # Firecrawl's default: its SDKs send none


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"sitemap": "sometimes"}, "sitemap"),
        ({"allowExternalLinks": True}, "allowExternalLinks"),
        ({"prompt": "all the blog posts"}, "prompt"),
        ({"regexOnFullURL": True}, "regexOnFullURL"),
        ({"maxDiscoveryDepth": 21}, "maxDiscoveryDepth"),
        ({"includePaths": ["("]}, "includePaths"),
        ({"scrapeOptions": {"actions": [{"type": "wait"}]}}, "scrapeOptions.actions"),
        ({"url": "file:///etc/passwd"}, "url"),
    ],
)
async def test_crawl_options_that_cannot_be_honoured_are_a_400_naming_them(
    body: dict[str, Any], field: str
) -> None:
    store = MemoryJobStore()
    async with memory_client(store) as client:
        answer = await client.post("/v2/crawl", json={"url": "https://a.example/"} | body)
    assert answer.status_code == 400, answer.text
    assert answer.json()["field"].startswith(field), answer.json()
    assert not store.jobs


async def test_a_scrape_past_its_wait_can_be_resumed_onto_the_same_job() -> None:
    from firecrawl.v2.utils.auto_resume import processing_continues_delay_s

    store = MemoryJobStore()
    settings = DispatcherSettings(auth_mode="none", dashboard_cache_s=0, scrape_max_wait_s=0.02)
    body = {"url": "https://a.example/slow", "formats": ["markdown"], "maxAge": 14400000}
    async with memory_client(store, settings) as client:  # no worker: every wait runs out
        first = await client.post("/v2/scrape", json=body)
        again = await client.post("/v2/scrape", json=body)
        fresh = [
            (await client.post("/v2/scrape", json=body | {"maxAge": 0})).json()["job_id"]
            for _ in range(2)
        ]
    assert first.status_code == 408 and first.json()["code"] == "SCRAPE_TIMEOUT"
    assert first.json()["details"] == {"state": "processing_continues", "retryAfterSeconds": 5}
    assert processing_continues_delay_s(first) == 5  # Firecrawl's SDK resumes on it
    assert again.json()["job_id"] == first.json()["job_id"]  # the retry found the same job
    assert fresh[0] != fresh[1]  # maxAge 0: always a fresh job, and no resume offered
    assert len(store.jobs) == 3


async def test_a_batch_with_an_idempotency_key_is_started_once() -> None:
    store = MemoryJobStore()
    body = {"urls": ["https://a.example/1"]}
    async with memory_client(store) as client:
        key = {"x-idempotency-key": "batch-1"}
        first = (await client.post("/v2/batch/scrape", json=body, headers=key)).json()
        again = (await client.post("/v2/batch/scrape", json=body, headers=key)).json()
        refused = await client.post(
            "/v2/batch/scrape", json=body, headers={"x-idempotency-key": "k\ty"}
        )
    assert first["id"] == again["id"] and len(store.jobs) == 1
    assert refused.status_code == 400 and refused.json()["field"] == "x-idempotency-key"
