"""The busiest window of a count kept by time step: a document's writes by second, a host's
request starts by tenth of a second."""

from __future__ import annotations

from collections.abc import Mapping


def busiest(counts: Mapping[int, int], width: int) -> int:
    """The most counted in any ``width`` consecutive steps (a sliding sum over the steps)."""
    ordered = sorted(counts.items())
    best = total = first = 0
    for step, count in ordered:
        total += count
        while ordered[first][0] <= step - width:
            total -= ordered[first][1]
            first += 1
        best = max(best, total)
    return best
