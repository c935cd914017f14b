"""The simulator on small workloads: the services' own code on simulated instances finds a
deliberately hot document, holds one shared host to its pace without a hot document (the pace
grid: before it, the host's document refused tens of thousands of writes), and loses nothing
when pushes are lost; the monitors' checks run hour after hour on the scheduler's tick."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from scrapejobs_scale.firestore_layout import Commits, StoreLayout, Write
from scrapejobs_scale.limited_ports import LimitedPorts
from scrapejobs_scale.workloads import (
    Outcome,
    Workload,
    lost_pushes,
    many_hosts,
    monitored_pages,
    one_busy_host,
)


def run(workload: Workload) -> Outcome:
    with ThreadPoolExecutor(1) as pool:  # the simulated clock's loop, apart from the suite's
        return pool.submit(workload.run).result(timeout=240)


def one_counter_for_every_page(ports: LimitedPorts) -> None:
    """What a naive design does: every settle also bumps one job-wide counter."""
    layout = dict(StoreLayout(ports.twins.store).layout())
    settle = layout["settle"]

    def with_counter(args: tuple[Any, ...], kwargs: dict[str, Any], answer: Any) -> Commits:
        [docs] = settle.commits(args, kwargs, answer)
        return [[*docs, "counters/pages"]]

    layout["settle"] = Write(with_counter)
    ports.store = ports.limited(ports.twins.store, layout)


def test_a_single_counter_written_for_every_page_is_caught() -> None:
    plain = many_hosts(0.005, instances=4)
    hot = Workload(plain.name, plain.deployment, plain.drive, wrap=one_counter_for_every_page)
    outcome = run(hot)
    contended = dict(outcome.ledger.contended)
    assert contended.get("counters/pages", 0) > 100, outcome.ledger.contended
    assert outcome.ledger.hottest[0].path == "counters/pages"  # the busiest document of all
    assert outcome.lost == 0 and outcome.doubled == 0  # refused commits were tried again


def test_one_host_shared_by_every_instance_keeps_its_pace_and_no_document_is_hot() -> None:
    outcome = run(one_busy_host(0.02, instances=10))
    assert outcome.lost == 0 and outcome.doubled == 0
    assert outcome.polite and outcome.peak_host_rps > 25, outcome.peak_host_rps
    hosts = [path for path, _ in outcome.ledger.contended if path.startswith("hosts/")]
    assert hosts == []
    assert outcome.pages_per_s > 25  # 0.4 pages a second when the host document kept the pace


def test_lost_pushes_are_found_again_and_nothing_is_lost_or_counted_twice() -> None:
    outcome = run(lost_pushes(0.01, instances=4))
    assert outcome.lost_pushes > 0
    assert outcome.lost == 0 and outcome.doubled == 0
    assert outcome.counted == outcome.pages == outcome.in_stats


def test_a_monitor_is_checked_every_hour_on_the_scheduler_s_tick() -> None:
    # the workload raises unless both hours' checks finished completed (the second one's start
    # is spread over the hour's first minutes: waiting a fixed 2 minutes past it missed it)
    outcome = run(monitored_pages(0.01, instances=4))
    assert outcome.scheduler_failures == ()
    assert outcome.pages == outcome.ended == 2_000  # two checks of 1,000 pages
    assert outcome.lost == 0 and outcome.doubled == 0
