"""Progress and ETA: a sliding window like rich's, null until there is data, 0 when
finished, never absurd."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from scrapejobs_shared.domain.progress import ProgressEstimator

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_no_estimate_before_the_job_started_or_finished_anything() -> None:
    estimator = ProgressEstimator()
    assert estimator.progress("j", 0, 100, None, False, at(5)).eta_s is None
    assert estimator.progress("j", 0, 100, T0, False, at(5)).eta_s is None
    assert estimator.progress("j", 3, 100, T0, False, at(0.5)).eta_s is None


def test_a_steady_job_s_estimate_is_its_remaining_work_over_its_rate() -> None:
    estimator = ProgressEstimator()
    etas = []
    for second in range(1, 11):  # 10 tasks a second
        progress = estimator.progress("j", 10 * second, 200, T0, False, at(second))
        etas.append(progress.eta_s)
        assert progress.rate_per_s is not None and abs(progress.rate_per_s - 10) < 0.01
    assert etas == sorted(etas, reverse=True)
    assert abs(etas[-1] - 10.0) < 0.1 and progress.percent == 50.0
    assert progress.estimated_completion == at(10) + timedelta(seconds=etas[-1])


def test_bursts_are_smoothed() -> None:
    estimator = ProgressEstimator()
    estimator.progress("j", 10, 1000, T0, False, at(1))  # 10/s on average
    burst = estimator.progress("j", 110, 1000, T0, False, at(1.5))  # 100 results in 0.5 s
    assert burst.rate_per_s is not None and burst.rate_per_s < 100  # not 200/s


def test_a_finished_job_is_done() -> None:
    progress = ProgressEstimator().progress("j", 7, 7, T0, True, at(3))
    assert (progress.percent, progress.eta_s, progress.done) == (100.0, 0.0, 7)


def test_a_job_that_stopped_moving_has_no_estimate_rather_than_an_absurd_one() -> None:
    estimator = ProgressEstimator()
    estimator.progress("j", 1, 10_000, T0, False, at(1))
    for second in range(2, 200):
        progress = estimator.progress("j", 1, 10_000, T0, False, at(second))
    assert progress.eta_s is None and progress.estimated_completion is None


def test_the_rate_is_what_the_last_30_seconds_saw() -> None:
    estimator = ProgressEstimator()
    for second in range(1, 61):  # 10/s for a minute, then 1/s
        estimator.progress("j", 10 * second, 10_000, T0, False, at(second))
    for second in range(61, 101):
        progress = estimator.progress("j", 600 + (second - 60), 10_000, T0, False, at(second))
    assert progress.rate_per_s is not None and abs(progress.rate_per_s - 1.0) < 0.05
