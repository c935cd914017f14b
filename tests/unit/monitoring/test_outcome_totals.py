"""Outcome totals: merging, percentiles from buckets, the store's flat fields, slots."""

from __future__ import annotations

from datetime import UTC, datetime

from scrapejobs_shared.domain.model_usage import ModelPrices, ModelUsage
from scrapejobs_shared.domain.outcome_stats import (
    BOUNDS_MS,
    Histogram,
    Totals,
    hour_of,
    slot_of,
    slots_between,
)
from scrapejobs_shared.domain.statuses import TaskStatus


def test_percentiles_interpolate_inside_the_bucket() -> None:
    histogram = Histogram.of([100] * 50 + [1000] * 50)
    assert histogram.count == 100 and histogram.mean_ms() == 550
    assert histogram.percentile_ms(0.5) == 100.0  # the 50th value closes the (50, 100] bucket
    p95 = histogram.percentile_ms(0.95)
    assert p95 is not None and 500 < p95 <= 1000
    assert Histogram().percentile_ms(0.5) is None and Histogram().mean_ms() is None


def test_values_above_the_last_bound_land_in_the_open_bucket() -> None:
    histogram = Histogram.of([10 * BOUNDS_MS[-1]])
    assert histogram.buckets[-1] == 1
    assert histogram.percentile_ms(1.0) == 2 * BOUNDS_MS[-1]


def test_totals_merge_by_addition_and_round_trip_through_flat_fields() -> None:
    a = Totals(
        {TaskStatus.SUCCEEDED: 3, TaskStatus.FAILED: 1},
        Histogram.of([20, 30, 40, 5000]),
        Histogram.of([15, 25]),
    )
    b = Totals(
        {TaskStatus.DEAD_LETTERED: 2, TaskStatus.CANCELLED: 4},
        Histogram.of([70]),
        ai=ModelUsage(calls=3, cached=1, input_tokens=9000, output_tokens=400),
    )
    merged = a + b
    assert merged.ai == b.ai
    assert merged.processed == 6  # cancelled tasks never ran
    assert merged.errors == 3 and merged.error_rate() == 0.5
    assert merged.service.count == 5 and merged.service.sum_ms == 5160
    assert Totals.from_fields(merged.to_fields()) == merged
    assert Totals().empty and not merged.empty and Totals().error_rate() is None


def test_slots_and_hours() -> None:
    moment = datetime(2026, 11, 23, 9, 47, 31, 5, tzinfo=UTC)
    assert slot_of(moment) == datetime(2026, 11, 23, 9, 45, tzinfo=UTC)
    assert hour_of(moment) == datetime(2026, 11, 23, 9, tzinfo=UTC)
    start = datetime(2026, 11, 23, 9, 42, tzinfo=UTC)
    assert [s.minute for s in slots_between(start, moment)] == [40, 45]


def test_a_cost_counts_the_tokens_at_the_prices_per_million() -> None:
    usage = ModelUsage(calls=4, cached=2, input_tokens=1_500_000, output_tokens=20_000)
    assert ModelPrices(0.15, 0.60).cost_of(usage) == 0.237  # 0.225 in + 0.012 out
    assert ModelPrices(per_mtok_out=2.0).cost_of(usage) == 0.04  # input not priced: free
    assert ModelPrices(1.0, 1.0).cost_of(ModelUsage(cached=5)) == 0.0  # reused: not paid
