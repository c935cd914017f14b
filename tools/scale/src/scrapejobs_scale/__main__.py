"""``make scale`` (``uv run scale``): the workloads on the simulated clock, and their table.

``--size`` scales every workload (1.0: a million URLs over 10,000 hosts from 200 instances,
one host at 50 requests a second from 200, 10% of 100,000 pushes lost); ``--only`` picks
workloads by the start of their key; ``--instances`` runs every workload at that many."""

from __future__ import annotations

import argparse
import logging
import sys
import time

from scrapejobs_scale.instance_cpu import PAGE_CPU_S
from scrapejobs_scale.report import contended, footnote, limits_table, table
from scrapejobs_scale.workloads import WORKLOADS, many_hosts

SCALING_INSTANCES = (20, 200)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scale", description=__doc__)
    parser.add_argument("--size", type=float, default=1.0)
    parser.add_argument("--only", nargs="*", default=[], help=f"of: {', '.join(WORKLOADS)}")
    parser.add_argument("--instances", type=int, default=None)
    parser.add_argument("--limits", action="store_true", help="print the limits table only")
    parser.add_argument(
        "--scaling",
        action="store_true",
        help="many-hosts at 20 and at 200 instances, URLs in proportion: how pages/s grows",
    )
    args = parser.parse_args(argv)
    if args.limits:
        print(limits_table())
        return 0
    if args.scaling:
        return scaling(args.size)
    logging.disable(logging.WARNING)  # the services' own warnings, thousands of instances' worth
    outcomes = []
    broken: list[str] = []
    for key, make in WORKLOADS.items():
        if args.only and not any(key.startswith(prefix) for prefix in args.only):
            continue
        workload = make(args.size, args.instances)
        began = time.perf_counter()
        print(f"{key}: {workload.name} ...", file=sys.stderr, flush=True)
        try:
            outcomes.append(workload.run())
        except RuntimeError as exc:  # a workload that could not finish: the others still report
            broken.append(f"{workload.name} ({exc})")
        print(f"  {time.perf_counter() - began:.0f} s", file=sys.stderr, flush=True)
    print(table(outcomes))
    print()
    print(contended(outcomes))
    print()
    print(footnote())
    failed = [
        o.name for o in outcomes if o.lost or o.doubled or not o.polite or o.scheduler_failures
    ]
    if failed:
        print(f"\nnot held: {', '.join(failed)}", file=sys.stderr)
    for name in broken:
        print(f"\ndid not finish: {name}", file=sys.stderr)
    return 1 if failed or broken else 0


def scaling(size: float) -> int:
    """Pages/s at 20 and at 200 instances, each with 5,000 URLs an instance (times ``size``),
    each page costing its instance's CPU (instance_cpu.py: without it a run ends in a few
    simulated seconds, too few to measure): the goal is growth of at least 0.8 of linear."""
    logging.disable(logging.WARNING)
    small, large = (
        many_hosts(size * n / 200, instances=n, page_cpu_s=PAGE_CPU_S).run()
        for n in SCALING_INSTANCES
    )
    growth = (large.pages_per_s / small.pages_per_s) / (large.instances / small.instances)
    print(table([small, large]))
    print(f"\npages/s grew {growth:.2f} of linear from {small.instances} to {large.instances}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
