"""A process's outcome statistics (delivery/stats_buffer.py): put whole, at most once every
``every_s``, a batch's end waiting for the put; a failed put is sent again; a put sent twice
leaves the same figures; a slot let go and added to again starts a document of its own."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.config.settings import CommonSettings
from scrapejobs_shared.delivery import stats_buffer
from scrapejobs_shared.delivery.stats_buffer import BURST, KEEP, StatsBuffer
from scrapejobs_shared.domain.outcome_stats import SLOT, Histogram, Totals, slot_of
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.ports.outcome_stats import SourceTotals

AT = datetime(2031, 5, 1, 12, 1, tzinfo=UTC)


def succeeded(n: int) -> Totals:
    return Totals({TaskStatus.SUCCEEDED: n}, fetch=Histogram.of([100] * n))


class Writes:
    """A writer that keeps each put (and fails the first ``failing``)."""

    def __init__(self, failing: int = 0, takes_s: float = 0.0) -> None:
        self.puts: list[tuple[float, str, list[SourceTotals]]] = []
        self.failing = failing
        self.takes_s = takes_s  # a commit's round trip

    async def put(self, source: str, entries: Sequence[SourceTotals]) -> None:
        await asyncio.sleep(self.takes_s)
        if self.failing:
            self.failing -= 1
            raise ConnectionError("down")
        self.puts.append((time.monotonic(), source, list(entries)))


async def test_puts_are_whole_and_at_most_one_an_interval() -> None:
    writes = Writes()
    buffer = StatsBuffer(writes, every_s=0.2, source="p1")
    for _ in range(20):
        await buffer.record("t1", AT, succeeded(1), ends=False)
        await asyncio.sleep(0.02)
    await buffer.flush()
    times = [at for at, _, _ in writes.puts]
    assert len(times) >= 2
    assert all(b - a >= 0.19 for a, b in itertools.pairwise(times))
    assert len(times) <= 4  # 20 settles over ~0.4 s: not one put each
    last = writes.puts[-1][2]
    assert [(e.slot, e.tenant, e.totals.count(TaskStatus.SUCCEEDED)) for e in last] == [
        (slot_of(AT), "t1", 20)
    ]  # the whole of the slot so far, not what came since the last put


async def test_batch_ends_put_at_once_in_a_burst_then_on_a_timer_never_waiting() -> None:
    writes = Writes()
    buffer = StatsBuffer(writes, every_s=0.3, source="p1")
    for n in range(BURST):  # batches that end one after another: each puts at once
        await buffer.record("t1", AT, succeeded(1), ends=True)
        assert len(writes.puts) == n + 1
    started = time.monotonic()
    await buffer.record("t1", AT, succeeded(1), ends=True)  # past the burst: not held back
    assert time.monotonic() - started < 0.1 and len(writes.puts) == BURST
    await asyncio.sleep(0.5)  # the timer puts it at the next turn
    assert len(writes.puts) == BURST + 1
    assert writes.puts[-1][2][0].totals.count(TaskStatus.SUCCEEDED) == BURST + 1
    assert writes.puts[-1][0] - writes.puts[0][0] >= 0.25  # no faster than the burst allows


async def test_a_busy_process_s_document_takes_at_most_ten_puts_in_any_ten_seconds() -> None:
    """At the default interval, on a clock ten times faster: batches ending every 10 ms and
    settles between them for 2 "10 s" windows; no window of 1 s (10 s) holds more than 10 puts
    (Firestore's about one write a second a document; at 5 in hand and 1 s, 15 did)."""
    every_s = CommonSettings.model_fields["stats_every_s"].default / 10
    writes = Writes()
    buffer = StatsBuffer(writes, every_s=every_s, source="p1")
    for n in range(200):
        await buffer.record("t1", AT, succeeded(1), ends=n % 2 == 0)
        await asyncio.sleep(0.01)
    await buffer.flush()
    times = [at for at, _, _ in writes.puts]
    busiest = max(sum(1 for t in times if start <= t < start + 1.0) for start in times)
    assert 3 <= busiest <= 10  # the burst at least; never the 15 of 5 in hand and 1 s


async def test_batches_that_end_together_share_a_put() -> None:
    writes = Writes(takes_s=0.05)
    buffer = StatsBuffer(writes, every_s=1, source="p1")
    ends = [buffer.record(f"t{n}", AT, succeeded(1), ends=True) for n in range(20)]
    await asyncio.gather(*ends)
    assert len(writes.puts) == 2  # the first, and one for all that came while it went
    put = {e.tenant for _, _, entries in writes.puts for e in entries}
    assert len(put) == 20


async def test_a_running_batch_never_waits_for_a_put_the_timer_makes_it() -> None:
    writes = Writes(takes_s=0.05)
    buffer = StatsBuffer(writes, every_s=0.1, source="p1")
    started = time.monotonic()
    await buffer.record("t1", AT, succeeded(1), ends=False)
    await buffer.record("t1", AT, succeeded(1), ends=False)
    assert time.monotonic() - started < 0.04 and writes.puts == []  # not held back
    await asyncio.sleep(0.3)  # no other settle: the timer puts both
    assert writes.puts[-1][2][0].totals.count(TaskStatus.SUCCEEDED) == 2


async def test_a_failed_put_is_sent_again_with_the_next() -> None:
    writes = Writes(failing=1)
    buffer = StatsBuffer(writes, every_s=0, source="p1")
    await buffer.record("t1", AT, succeeded(1), ends=True)  # fails: logged, not raised
    assert writes.puts == []
    await buffer.record("t2", AT, succeeded(1), ends=True)
    assert sorted(e.tenant for e in writes.puts[-1][2]) == ["t1", "t2"]


async def test_stopping_puts_what_is_left_at_once() -> None:
    writes = Writes()
    buffer = StatsBuffer(writes, every_s=60, source="p1")
    await buffer.record("t1", AT, succeeded(1), ends=False)
    await buffer.record("t1", AT, succeeded(1), ends=False)
    started = time.monotonic()
    await buffer.aclose()
    assert time.monotonic() - started < 5
    assert writes.puts[-1][2][0].totals.count(TaskStatus.SUCCEEDED) == 2


async def test_nothing_to_say_puts_nothing() -> None:
    writes = Writes()
    buffer = StatsBuffer(writes, every_s=0, source="p1")
    await buffer.record("t1", AT, Totals(), ends=True)
    await buffer.aclose()
    assert writes.puts == []


async def test_a_slot_let_go_and_added_to_again_has_a_document_of_its_own() -> None:
    writes = Writes()
    buffer = StatsBuffer(writes, every_s=0, source="p1")
    await buffer.record("t1", AT, succeeded(1), ends=True)
    later = AT + KEEP + 2 * SLOT
    await buffer.record("t1", later, succeeded(1), ends=True)  # AT's slot is let go
    await buffer.record("t1", AT, succeeded(5), ends=True)  # a settle stamped late
    source, entries = writes.puts[-1][1], writes.puts[-1][2]
    assert source != "p1"  # p1's document of AT's slot keeps its 1
    assert entries[0].totals.count(TaskStatus.SUCCEEDED) == 5


async def test_on_the_memory_twin_puts_set_and_processes_add_up() -> None:
    store = MemoryJobStore()
    one = StatsBuffer(store, every_s=0, source="p1")
    two = StatsBuffer(store, every_s=0, source="p2")
    await one.record("t1", AT, succeeded(2), ends=True)
    await one.record("t1", AT, succeeded(3), ends=True)
    await two.record("t1", AT, succeeded(4), ends=True)
    await one.flush()  # nothing new: the same figures
    await store.put("p2", [SourceTotals(slot_of(AT), "t1", succeeded(4))])  # sent again
    slot = slot_of(AT)
    mine = await store.slot_totals([slot], AT, tenant="t1")
    everyone = await store.slot_totals([slot], AT)
    assert mine[slot].count(TaskStatus.SUCCEEDED) == 9
    assert everyone[slot].count(TaskStatus.SUCCEEDED) == 9
    assert mine[slot].fetch.count == 9
    hours = await store.day_totals([AT.replace(hour=0, minute=0)], AT + timedelta(hours=1))
    assert sum(t.count(TaskStatus.SUCCEEDED) for t in hours.values()) == 9


async def test_every_s_0_puts_at_every_settle_before_it_returns() -> None:
    writes = Writes(takes_s=0.01)
    buffer = StatsBuffer(writes, every_s=0, source="p1")
    await buffer.record("t1", AT, succeeded(1), ends=False)  # a running batch's, too
    assert len(writes.puts) == 1


async def test_a_turn_a_rounding_error_away_is_taken_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a simulated clock (make scale) a sleep moves time by exactly what it asked, and a
    wait computed after it may come out a rounding error above zero: sleeping that moved no
    time, and the flush went round without end (the tenants workload: 7 CPU-minutes, not 40 s)."""
    now = [1000.0]
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        assert len(sleeps) < 50, "the flush goes round without end"
        now[0] += max(0.0, seconds - 1e-12)  # a rounding error short

    monkeypatch.setattr(stats_buffer.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(stats_buffer.asyncio, "sleep", sleep)
    writes = Writes()
    buffer = StatsBuffer(writes, every_s=1.0, source="p1")
    buffer.add("t1", AT, succeeded(1))
    await buffer.flush()  # the first put: at once
    buffer.add("t1", AT, succeeded(1))
    await buffer.flush()  # the next: a turn later
    assert len(writes.puts) == 2 and [s for s in sleeps if s] == [1.0]  # one turn waited
