"""The simulation's collector pace holds for the run only."""

from __future__ import annotations

import gc

import pytest

from scrapejobs_scale.garbage_collection import SIMULATION_THRESHOLDS, collected_less_often


def test_the_thresholds_hold_during_the_run_and_come_back_after_even_on_an_error() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), collected_less_often():
        assert gc.get_threshold() == SIMULATION_THRESHOLDS
        raise RuntimeError("a workload that did not finish")
    assert gc.get_threshold() == before
