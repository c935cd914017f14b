"""One trace from submit to store across both services (issue 9).

The dispatcher and the worker run in-process over one in-memory store, each with its own
tracer provider and in-memory span exporter: the only thing that carries the trace from one
to the other is the W3C context in the published message's attributes, as in production.
The worker fetches a real site on loopback through the SSRF-safe fetcher.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.adapters.memory.host_gate import MemoryHostGate
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.adapters.memory.webhooks import MemoryWebhookLog, MemoryWebhookOutbox
from scrapejobs_shared.observability.telemetry import Telemetry, telemetry_with
from scrapejobs_worker.main import create_app as worker_app
from scrapejobs_worker.settings import WorkerSettings
from support.jobs import PRODUCT_FIELDS, envelope_for, submit
from support.memory_dispatcher import memory_dispatcher
from support.site import Site

URLS = 3


@dataclass
class Traced:
    telemetry: Telemetry
    spans: InMemorySpanExporter

    @classmethod
    def of(cls, service: str) -> Traced:
        exporter = InMemorySpanExporter()
        processor = SimpleSpanProcessor(exporter)
        return cls(telemetry_with(service, span_processors=[processor]), exporter)

    def finished(self) -> tuple[ReadableSpan, ...]:
        return self.spans.get_finished_spans()


@dataclass
class Services:
    dispatcher: httpx.AsyncClient
    worker: httpx.AsyncClient
    publisher: MemoryTaskPublisher
    dispatcher_spans: Traced
    worker_spans: Traced


@pytest.fixture
async def services() -> AsyncIterator[Services]:
    store, publisher = MemoryJobStore(), MemoryTaskPublisher()
    dispatcher_spans = Traced.of("scrapejobs-dispatcher")
    worker_spans = Traced.of("scrapejobs-worker")
    dispatcher = memory_dispatcher(
        store,
        DispatcherSettings(auth_mode="none"),
        publisher=publisher,
        telemetry=dispatcher_spans.telemetry,
    )
    worker = worker_app(
        WorkerSettings(push_auth="none", fetch_allowlist=["127.0.0.0/8"], warm_slot_idle_s=0),
        {
            "store": store,
            "gate": MemoryHostGate(),
            "publisher": MemoryTaskPublisher(),  # what the worker publishes (deferrals, crawls)
            "webhook_outbox": MemoryWebhookOutbox(),
            "webhook_log": MemoryWebhookLog(),
        },
        telemetry=worker_spans.telemetry,
    )
    async with (
        dispatcher.router.lifespan_context(dispatcher),
        worker.router.lifespan_context(worker),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=dispatcher), base_url="http://dispatcher"
        ) as dispatcher_client,
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=worker), base_url="http://worker"
        ) as worker_client,
    ):
        yield Services(dispatcher_client, worker_client, publisher, dispatcher_spans, worker_spans)
    dispatcher_spans.telemetry.shutdown()
    worker_spans.telemetry.shutdown()


def _named(spans: Sequence[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [span for span in spans if span.name == name]


def _one(spans: Sequence[ReadableSpan], name: str) -> ReadableSpan:
    [span] = _named(spans, name)
    return span


def _is_child(child: ReadableSpan, parent: ReadableSpan) -> bool:
    assert child.parent is not None, f"{child.name} has no parent"
    assert parent.context is not None
    return child.parent.span_id == parent.context.span_id


async def test_one_trace_runs_from_submit_through_publish_push_fetch_and_store(
    services: Services, site: Site
) -> None:
    urls = [f"{site.url}/product/{n}" for n in range(1, URLS + 1)]
    job = await submit(services.dispatcher, {"urls": urls, "extract": PRODUCT_FIELDS})
    [(message, attributes)] = services.publisher.batches
    assert "traceparent" in attributes

    pushed = await services.worker.post("/pubsub/push", json=envelope_for(message, attributes))
    assert pushed.status_code == 204, pushed.text
    results = (await services.dispatcher.get(f"/v1/jobs/{job['id']}/results")).json()
    assert [r["status"] for r in results["results"]] == ["succeeded"] * URLS

    sent, received = services.dispatcher_spans.finished(), services.worker_spans.finished()
    request = _one(sent, "POST /v1/jobs")
    submitted = _one(sent, "submit_job")
    published = _one(sent, "publish")
    processed = _one(received, "process_batch")
    fetches = _named(received, "fetch")
    stored = _one(received, "store")

    chain = [request, submitted, published, processed, *fetches, stored]
    assert {span.context.trace_id for span in chain if span.context} == {
        request.context.trace_id if request.context else 0
    }, "every span is in the submission's trace"
    assert request.parent is None and request.kind is SpanKind.SERVER
    assert request.attributes and request.attributes["http.route"] == "/v1/jobs"
    assert _is_child(submitted, request)
    assert _is_child(published, submitted) and published.kind is SpanKind.PRODUCER
    assert _is_child(processed, published) and processed.kind is SpanKind.CONSUMER
    assert sorted(str(span.attributes and span.attributes["url.full"]) for span in fetches) == (
        sorted(urls)
    )
    assert all(_is_child(fetch, processed) for fetch in fetches)
    assert _is_child(stored, processed)
    # Each service reports its own spans under its own name: the trace crossed processes
    # only through the message's attributes.
    assert {span.resource.attributes["service.name"] for span in sent} == {"scrapejobs-dispatcher"}
    assert {span.resource.attributes["service.name"] for span in received} == {"scrapejobs-worker"}


async def test_without_an_exporter_nothing_is_recorded_but_the_context_still_travels(
    site: Site,
) -> None:
    store, publisher = MemoryJobStore(), MemoryTaskPublisher()
    app = memory_dispatcher(store, DispatcherSettings(auth_mode="none"), publisher=publisher)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://d") as client,
    ):
        await submit(client, {"url": f"{site.url}/product/1", "extract": PRODUCT_FIELDS})
    [(_, attributes)] = publisher.batches
    version, trace_id, span_id, flags = attributes["traceparent"].split("-")
    assert version == "00" and int(trace_id, 16) and int(span_id, 16)
    assert not int(flags, 16) & 0x01  # not sampled (W3C "sampled" flag off)
