"""HostSpread: a batch's lanes spread over its hosts, one slot per host when hosts are many."""

from __future__ import annotations

from collections import Counter

from scrapejobs_shared.domain.records import BatchItem
from scrapejobs_worker.batches.host_spread import HostSpread


def items(hosts: int, per_host: int) -> tuple[BatchItem, ...]:
    return tuple(
        BatchItem(task_id=f"h{h}-{n}", url=f"http://h{h}.example/p/{n}", index=h * per_host + n)
        for h in range(hosts)
        for n in range(per_host)
    )


def drain(spread: HostSpread) -> list[BatchItem]:
    """Run the lanes one step at a time: each takes a task, then the oldest finishes."""
    taken: list[BatchItem] = []
    running: list[BatchItem] = []
    for _ in range(spread.lanes):
        if (item := spread.next()) is not None:
            running.append(item)
    while running:
        finished = running.pop(0)
        taken.append(finished)
        spread.done(finished)
        if (item := spread.next()) is not None:
            running.append(item)
    return taken


def test_one_host_gets_every_lane() -> None:
    spread = HostSpread(items(1, 100), concurrency=8)
    assert (spread.per_host, spread.lanes) == (8, 8)
    assert [i.task_id for i in drain(spread)] == [f"h0-{n}" for n in range(100)]


def test_many_hosts_get_one_lane_each_and_every_task_runs_once() -> None:
    spread = HostSpread(items(5, 20), concurrency=8)
    assert (spread.per_host, spread.lanes) == (1, 5)
    in_flight: Counter[str] = Counter()
    seen: list[str] = []
    for _ in range(spread.lanes):
        item = spread.next()
        assert item is not None
        in_flight[item.url.split("/")[2]] += 1
        seen.append(item.task_id)
    assert max(in_flight.values()) == 1 and spread.next() is None  # every host has its lane
    spread = HostSpread(items(5, 20), concurrency=8)
    done = drain(spread)
    assert sorted(i.task_id for i in done) == sorted(i.task_id for i in items(5, 20))


def test_two_hosts_share_the_lanes_and_a_host_keeps_submission_order() -> None:
    spread = HostSpread(items(2, 10), concurrency=8)
    assert (spread.per_host, spread.lanes) == (4, 8)
    done = drain(spread)
    for host in ("h0", "h1"):
        assert [i.index for i in done if i.task_id.startswith(host)] == sorted(
            i.index for i in done if i.task_id.startswith(host)
        )
    assert len(done) == 20


def test_fewer_tasks_than_lanes() -> None:
    assert HostSpread(items(1, 3), concurrency=8).lanes == 3
    assert HostSpread(items(3, 1), concurrency=8).lanes == 3
    assert HostSpread((), concurrency=8).lanes == 0
