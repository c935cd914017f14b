"""The pace grid: a fast pace on shards that each take at most ``PACE_DOC_WRITES_S`` writes a
second, its starts on instants one interval apart, one start an instant."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from scrapejobs_shared.politeness.host_gate import HostLimits
from scrapejobs_shared.politeness.pace_grid import PACE_DOC_WRITES_S, PaceGrid

NOW = datetime(2026, 6, 1, 12, 0, 0, 10_000, tzinfo=UTC)


def test_a_slow_pace_stays_on_one_document_and_a_fast_one_spreads() -> None:
    assert PaceGrid.of(HostLimits(8)) is None
    assert PaceGrid.of(HostLimits(8, min_interval_s=2.0)) is None  # 0.5/s: one document
    assert PaceGrid.of(HostLimits(8, min_interval_s=30.0)) is None  # a Crawl-delay
    grid = PaceGrid.of(HostLimits(8, min_interval_s=0.02))  # 50 requests a second
    assert grid is not None and grid.shards == 100 and grid.spread == 25
    # each shard owns one instant in ``shards``: 50/100 = 0.5 starts (writes) a second
    assert 1.0 / (grid.interval_s * grid.shards) <= PACE_DOC_WRITES_S


def test_an_acquirer_picks_one_of_the_next_instants_and_its_shard_owns_it() -> None:
    grid = PaceGrid(0.1, 20)
    rng = random.Random(3)
    for _ in range(200):
        instant = grid.pick(NOW, rng)
        ahead = (instant.start - NOW).total_seconds()
        assert 0 <= ahead < grid.spread * grid.interval_s
        assert grid.shard_at(instant.start) == instant.shard
        steps = instant.start.timestamp() / 0.1
        assert abs(steps - round(steps)) < 1e-3


def test_an_instant_is_taken_once_and_its_shard_waits_for_its_next() -> None:
    grid = PaceGrid(0.1, 20)
    instant = grid.instant(17_000_000_000)
    assert grid.allows(None, instant)
    after = grid.after(instant)
    assert not grid.allows(after, instant)  # the same instant again: taken
    assert after - instant.start == timedelta(seconds=2)
    assert grid.allows(after, grid.instant(17_000_000_020))  # the shard's next instant


def test_every_instant_taken_once_makes_at_most_the_rate_in_any_second() -> None:
    """Many acquirers over 10 s, each taking whatever instant its pick finds free: no second
    holds more starts than the rate allows, plus the one at its edge."""
    grid = PaceGrid(0.02, 100)
    rng = random.Random(9)
    shards: dict[int, datetime] = {}
    starts: list[datetime] = []
    now = NOW
    for _ in range(20_000):
        now += timedelta(milliseconds=rng.choice((0, 0, 1, 3)))
        instant = grid.pick(now, rng)
        if grid.allows(shards.get(instant.shard), instant):
            shards[instant.shard] = grid.after(instant)
            starts.append(instant.start)
    starts.sort()
    assert len(starts) == len(set(starts))
    first = 0
    for last, start in enumerate(starts):
        while starts[first] <= start - timedelta(seconds=1):
            first += 1
        assert last - first + 1 <= 51
