"""Priority lanes: a job's batches carry its lane, crawl children inherit it, URLs that name
documents travel in the documents lane, and the enqueuer publishes each lane's batches with the
lane attribute that picks the lane's topic."""

from __future__ import annotations

import posixpath
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from opentelemetry.trace import NoOpTracer

from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.delivery.batching import plan_batches
from scrapejobs_shared.delivery.enqueue import Enqueuer
from scrapejobs_shared.delivery.url_lanes import lane_for, names_document
from scrapejobs_shared.domain.jobspec import JobRequest
from scrapejobs_shared.domain.lanes import LANES
from scrapejobs_shared.domain.records import BatchItem
from scrapejobs_shared.extraction.document_types import BY_EXTENSION
from scrapejobs_shared.messaging.topology import LANE_ATTRIBUTE, in_lane

NOW = datetime(2026, 11, 23, tzinfo=UTC)


def batches(job_id: str, lane: str, n: int = 3):
    items = [BatchItem(f"{job_id}-{i}", f"http://h{i}.example/") for i in range(n)]
    return plan_batches(job_id, items, 1, NOW, NOW + timedelta(days=1), lane=lane)


async def test_each_lane_is_published_with_its_attribute() -> None:
    publisher = MemoryTaskPublisher()
    enqueuer = Enqueuer(MemoryJobStore(), publisher, lambda: NOW, NoOpTracer())
    await enqueuer.publish(batches("a", "low") + batches("b", "high", 2))
    lanes = [(m.job_id, attributes[LANE_ATTRIBUTE]) for m, attributes in publisher.batches]
    assert sorted(lanes) == [("a", "low")] * 3 + [("b", "high")] * 2
    await enqueuer.republish(batches("c", "high")[0], deferrals=1)
    assert publisher.batches[-1][1][LANE_ATTRIBUTE] == "high"


def test_lane_names_keep_the_normal_lane_as_deployed() -> None:
    assert LANES == ("high", "normal", "low", "render", "processing", "documents")
    assert in_lane("scrape-tasks", "normal") == "scrape-tasks"
    assert in_lane("scrape-tasks-push", "high") == "scrape-tasks-push-high"
    assert in_lane("scrape-tasks-push", "render") == "scrape-tasks-push-render"
    assert batches("d", "normal")[0].lane == "normal"


def test_a_rendered_job_travels_in_the_render_lane_whatever_its_priority() -> None:
    def lane(**body: object) -> str:
        return JobRequest.model_validate({"url": "https://example.com/", **body}).lane()

    assert lane() == "normal"
    assert lane(priority="high") == "high"
    assert lane(options={"render": True}, priority="high") == "render"
    assert lane(options={"render": {"wait_ms": 100}}) == "render"
    assert lane(options={"render": False}, priority="low") == "low"


def test_urls_that_name_documents_take_the_documents_lane() -> None:
    assert names_document("https://example.com/reports/Q3.PDF")
    assert names_document("https://example.com/prices.xlsx?version=2#sheet")
    assert names_document("https://example.com/old.doc")  # refused when read, but a document
    assert not names_document("https://example.com/report.pdf/summary")
    assert not names_document("https://example.com/download?file=report.pdf")
    assert not names_document("https://example.com/pdf")
    assert not names_document("https://files.pdf") and not names_document("https://a.b/x.pdf.")
    assert not names_document("https://example.com/.pdf")  # a hidden file's name, no extension
    assert names_document("https://user@example.com:8443/a/b/c.epub")
    assert lane_for("https://example.com/a.pdf", "normal") == "documents"
    assert lane_for("https://example.com/a.pdf", "high") == "documents"
    assert lane_for("https://example.com/a.pdf", "render") == "render"  # its browser fetches it
    assert lane_for("https://example.com/a.html", "low") == "low"


def test_names_document_reads_the_path_as_urlsplit_does() -> None:
    parts = ["", "/", "/a", "/a.pdf", "/a.PDF/", "/dir.pdf/a", "/a.tar.gz", "/a.docx;v=1"]
    parts += ["/.epub", "/a.", "/%2e.pdf", "/a..xlsx", "/é.rtf"]
    tails = ["", "?q=1.pdf", "#x.pdf", "?a=b#c", "?/x.pdf"]
    hosts = ["https://a.example", "http://user:pw@a.example:81", "https://[::1]"]
    for host in hosts:
        for path in parts:
            for tail in tails:
                url = host + path + tail
                expected = posixpath.splitext(urlsplit(url).path)[1].lower() in BY_EXTENSION
                assert names_document(url) is expected, url


def test_a_job_of_pages_and_documents_is_planned_in_two_lanes() -> None:
    urls = ["http://b.example/1.pdf", "http://a.example/", "http://a.example/2.docx"]
    urls += ["http://b.example/x", "http://a.example/y"]
    items = [BatchItem(f"t{i}", url, index=i) for i, url in enumerate(urls)]
    planned = plan_batches("j", items, 2, NOW, NOW + timedelta(days=1), lane="high")
    assert [(b.lane, [i.url for i in b.items]) for b in planned] == [
        ("high", ["http://a.example/", "http://a.example/y"]),
        ("high", ["http://b.example/x"]),
        ("documents", ["http://a.example/2.docx", "http://b.example/1.pdf"]),
    ]
    again = plan_batches("j", items[::-1], 2, NOW, NOW + timedelta(days=1), lane="high")
    assert [b.id for b in again] == [b.id for b in planned]  # a re-plan finds the same batches
    assert len({b.id for b in planned}) == 3


async def test_documents_are_published_to_the_documents_lane() -> None:
    publisher = MemoryTaskPublisher()
    enqueuer = Enqueuer(MemoryJobStore(), publisher, lambda: NOW, NoOpTracer())
    items = [BatchItem("t0", "http://a.example/r.pdf"), BatchItem("t1", "http://a.example/")]
    await enqueuer.publish(plan_batches("j", items, 10, NOW, NOW + timedelta(days=1)))
    lanes = sorted(attributes[LANE_ATTRIBUTE] for _, attributes in publisher.batches)
    assert lanes == ["documents", "normal"]
