"""A job's window on a host: its batches beyond the first ``host_window`` of a host are held
(stored, not published); the worker releases the next when one finishes its fetches; a cancel
releases them all; the reconcile resumes a chain a crash broke. Over in-memory adapters."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.adapters.memory.held_batches import MemoryHeldBatches
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.delivery.batching import hold_beyond, plan_batches, size_for
from scrapejobs_shared.delivery.enqueue import DEFERRALS
from scrapejobs_shared.domain.records import BatchItem, task_id_for
from scrapejobs_shared.domain.statuses import JobStatus
from scrapejobs_shared.messaging.task_message import BatchMessage, PushedMessage
from support.memory_dispatcher import memory_client
from support.worker_fakes import NOW, ScriptedFetcher, build_processor

ONE_HOST = [f"http://a.example/p/{n}" for n in range(25)]
SETTINGS = DispatcherSettings(
    auth_mode="none", batch_size=5, host_window_batches=2, coalesce_window_ms=0
)


def delivery(message: BatchMessage) -> PushedMessage:
    return PushedMessage("m1", message.encode(), {}, "sub", None)


def test_only_a_hosts_batches_beyond_the_window_are_held() -> None:
    items = [BatchItem(task_id_for("j", str(n)), url, index=n) for n, url in enumerate(ONE_HOST)]
    items += [BatchItem(task_id_for("j", f"b{n}"), f"http://b.example/{n}") for n in range(5)]
    planned = plan_batches("j", items, 5, NOW, NOW + timedelta(days=1))
    held = hold_beyond(planned, 2)
    assert [b.held for b in held] == [False, False, True, True, True, False]
    assert not any(b.held for b in hold_beyond(planned, 0))  # 0: no window
    many_hosts = [
        BatchItem(task_id_for("k", str(n)), f"http://h{n}.example/", index=n) for n in range(30)
    ]
    spread = plan_batches("k", many_hosts, 1, NOW, NOW + timedelta(days=1))
    assert not any(b.held for b in hold_beyond(spread, 2))  # each host's first batch goes


def test_a_job_that_holds_batches_is_cut_into_shorter_ones() -> None:
    def urls(n: int, host: str = "a.example") -> list[BatchItem]:
        return [BatchItem(task_id_for("j", f"{host}{i}"), f"http://{host}/{i}") for i in range(n)]

    assert size_for(urls(21), 10, 2, 5) == 5  # a host beyond two batches of 10: held
    assert size_for(urls(20), 10, 2, 5) == 10  # two batches of 10 go at once: nothing held
    assert size_for(urls(20) + urls(20, "b.example"), 10, 2, 5) == 10  # per host
    assert size_for(urls(21), 10, 0, 5) == 10  # no window, nothing held
    assert size_for(urls(21), 10, 2, 20) == 10  # never longer than the batch size
    assert size_for([], 10, 2, 5) == 10


async def test_a_held_job_s_batches_are_the_held_size_on_the_wire() -> None:
    store, publisher = MemoryJobStore(), MemoryTaskPublisher()
    settings = SETTINGS.model_copy(update={"batch_size": 10, "held_batch_size": 5})
    async with memory_client(store, settings, publisher=publisher) as api:
        held = (await api.post("/v1/jobs", json={"urls": ONE_HOST})).json()["id"]
        assert [len(b.items) for b in store.batches[held].values()] == [5] * 5
        whole = (await api.post("/v1/jobs", json={"urls": ONE_HOST[:20]})).json()["id"]
        assert [len(b.items) for b in store.batches[whole].values()] == [10, 10]


async def run_chain(
    store: MemoryJobStore, publisher: MemoryTaskPublisher, fetcher: ScriptedFetcher
) -> int:
    """Deliver every batch published, those the deliveries release included; how many."""
    processor = build_processor(
        store,
        fetcher,
        lambda: NOW,
        publisher=publisher,
        held=MemoryHeldBatches(store),
        page_cache=store,
    )
    delivered = 0
    while delivered < len(publisher.batches):  # each finished batch releases the next
        message, _ = publisher.batches[delivered]
        assert (await processor.handle_push(delivery(message))).ack
        delivered += 1
    return delivered


async def test_a_one_host_job_puts_two_batches_in_the_broker_and_the_worker_moves_on() -> None:
    store, publisher = MemoryJobStore(), MemoryTaskPublisher()
    async with memory_client(store, SETTINGS, publisher=publisher) as api:
        job_id = (await api.post("/v1/jobs", json={"urls": ONE_HOST})).json()["id"]
        assert len(publisher.batches) == 2  # of 5 batches: the host's window
        assert sum(b.held for b in store.batches[job_id].values()) == 3
        assert await run_chain(store, publisher, ScriptedFetcher(200)) == 5
        assert not any(b.held for b in store.batches[job_id].values())
        job = (await api.get(f"/v1/jobs/{job_id}")).json()
        assert job["status"] == "completed" and job["counts"]["succeeded"] == 25


async def test_a_batch_with_nothing_to_fetch_still_releases_the_next() -> None:
    """Every page of the second job is reused from the first's (no lane runs): its batches
    still move the window on (else the rest waited for the reconcile, minutes later)."""
    store, publisher = MemoryJobStore(), MemoryTaskPublisher()
    body = {"urls": ONE_HOST, "options": {"cache_store": True, "cache_max_age_s": 600}}
    async with memory_client(store, SETTINGS, publisher=publisher) as api:
        first = (await api.post("/v1/jobs", json=body)).json()["id"]
        assert await run_chain(store, publisher, ScriptedFetcher(200)) == 5
        assert len(store.kept_pages) == 25
        publisher.published.clear()
        again = ScriptedFetcher(200)
        second = (await api.post("/v1/jobs", json=body)).json()["id"]
        assert await run_chain(store, publisher, again) == 5
        assert again.calls == []  # every page reused
        assert not any(b.held for b in store.batches[second].values())
        for job_id in (first, second):
            job = (await api.get(f"/v1/jobs/{job_id}")).json()
            assert job["status"] == "completed" and job["counts"]["succeeded"] == 25


async def test_a_cancel_releases_every_held_batch_so_the_job_ends() -> None:
    store, publisher = MemoryJobStore(), MemoryTaskPublisher()
    async with memory_client(store, SETTINGS, publisher=publisher) as api:
        job_id = (await api.post("/v1/jobs", json={"urls": ONE_HOST})).json()["id"]
        assert (await api.post(f"/v1/jobs/{job_id}:cancel")).status_code == 200
        assert len(publisher.batches) == 5  # the held ones too: the workers end them cancelled
        assert not any(b.held for b in store.batches[job_id].values())


async def test_the_reconcile_resumes_a_chain_whose_release_was_lost() -> None:
    store, publisher = MemoryJobStore(), MemoryTaskPublisher()
    async with memory_client(store, SETTINGS, publisher=publisher) as api:
        job_id = (await api.post("/v1/jobs", json={"urls": ONE_HOST})).json()["id"]
        # the first two batches finish, but their deliveries die before releasing the next
        processor = build_processor(store, ScriptedFetcher(200), lambda: NOW, held=None)
        for message, _ in list(publisher.batches):
            assert (await processor.handle_push(delivery(message))).ack
        published = len(publisher.batches)
        await asyncio.sleep(1.1)  # the held batches: older than the reconcile's cut-off
        report = await api.post("/v1/maintenance/reconcile", params={"older_than_s": 1})
        assert report.status_code == 200, report.text
        assert len(publisher.batches) == published + 1  # one held batch released, published
        assert sum(b.held for b in store.batches[job_id].values()) == 2
        assert store.jobs[job_id].status is not JobStatus.COMPLETED


async def test_a_cancel_and_the_reconcile_wake_deferred_batches_waiting_for_their_time() -> None:
    """A batch waiting for its time (a slow pace) is published at once by a cancel (its tasks
    end cancelled), and by the reconcile once past its time by more than its grace (the worker
    that would have woken it stopped), with the deferrals it kept."""
    store, publisher = MemoryJobStore(), MemoryTaskPublisher()
    waits = MemoryHeldBatches(store)
    now = datetime.now(UTC)
    async with memory_client(store, SETTINGS, publisher=publisher) as api:
        lost = (await api.post("/v1/jobs", json={"urls": ONE_HOST[:5]})).json()["id"]
        [late] = store.batches[lost].values()
        assert await waits.wait(late, now - timedelta(minutes=2), 4, now - timedelta(minutes=3))
        cancelled = (await api.post("/v1/jobs", json={"urls": ONE_HOST[5:10]})).json()["id"]
        [waiting] = store.batches[cancelled].values()
        assert await waits.wait(waiting, now + timedelta(seconds=100), 2, now)
        published = len(publisher.batches)

        assert (await api.post(f"/v1/jobs/{cancelled}:cancel")).status_code == 200
        [(message, attributes)] = publisher.batches[published:]
        assert message.batch_id == waiting.id and attributes[DEFERRALS] == "2"

        report = await api.post("/v1/maintenance/reconcile", params={"older_than_s": 3600})
        assert report.status_code == 200, report.text
        [(message, attributes)] = publisher.batches[published + 1 :]
        assert message.batch_id == late.id and attributes[DEFERRALS] == "4"
        assert all(b.wait_until is None for b in store.batches[lost].values())
