"""``make scale``'s table: one row a workload, and what each must hold."""

from __future__ import annotations

from collections.abc import Sequence

from scrapejobs_scale.limits import FIRESTORE_PRICING, LIMITS
from scrapejobs_scale.workloads import Outcome

WRITE_PRICE_PER_100K = 0.18  # USD, Firestore Standard list price (FIRESTORE_PRICING)
READ_PRICE_PER_100K = 0.06
HEADER = (
    "workload",
    "instances",
    "pages",
    "simulated s",
    "pages/s",
    "machine s",
    "writes/page",
    "reads/page",
    "Firestore $ per 1M pages",
    "docs > 1 w/s",
    "refused (contention)",
    "refused (ramp)",
    "hottest document (busiest 10 s)",
    "lost",
    "doubled",
    "polite",
    "submissions refused",
)


def cost_per_million(outcome: Outcome) -> float:
    """Firestore's writes and reads of a million pages at list price."""
    writes = outcome.writes_per_page * WRITE_PRICE_PER_100K
    reads = outcome.reads_per_page * READ_PRICE_PER_100K
    return (writes + reads) * 1_000_000 / 100_000


def row(outcome: Outcome) -> tuple[str, ...]:
    ledger = outcome.ledger
    hottest = ledger.hottest[0] if ledger.hottest else None
    hot = f"{shorten(hottest.path)} {hottest.peak_per_s:.2f}/s" if hottest else "-"
    polite = "yes" if outcome.polite else f"NO ({outcome.peak_host_rps:g} req/s)"
    if not outcome.host_rps_limit:
        polite = "-"
    return (
        outcome.name,
        str(outcome.instances),
        f"{outcome.pages:,}",
        f"{outcome.simulated_s:,.0f}",
        f"{outcome.pages_per_s:,.0f}",
        f"{outcome.machine_s:,.0f}",
        f"{outcome.writes_per_page:.2f}",
        f"{outcome.reads_per_page:.2f}",
        f"${cost_per_million(outcome):.2f}",
        str(len(ledger.over_sustained)),
        f"{ledger.refused_contention:,}",
        f"{ledger.refused_ramp:,}",
        hot,
        f"{outcome.lost}" + (" (stuck)" if outcome.stalled else ""),
        str(outcome.doubled),
        polite,
        f"{outcome.refused_submissions:,}",
    )


def shorten(path: str) -> str:
    """Ids cut to 6 characters, so a path reads as its layout."""
    parts = path.split("/")
    return "/".join(p if n % 2 == 0 or len(p) <= 8 else p[:6] + "…" for n, p in enumerate(parts))


def table(outcomes: Sequence[Outcome]) -> str:
    rows = [HEADER, *(row(outcome) for outcome in outcomes)]
    lines = ["| " + " | ".join(cells) + " |" for cells in rows]
    lines.insert(1, "|" + "---|" * len(HEADER))
    return "\n".join(lines)


def contended(outcomes: Sequence[Outcome], top: int = 5) -> str:
    """The documents that refused writes, and the scheduler's calls refused, per workload:
    where to look first."""
    lines = []
    for outcome in outcomes:
        for path, refused in outcome.ledger.contended[:top]:
            lines.append(f"- {outcome.name}: `{shorten(path)}` refused {refused:,} commits")
        for failure in outcome.scheduler_failures[:top]:
            lines.append(f"- {outcome.name}: the scheduler's call at {failure}")
    return "\n".join(lines) or "- none"


def footnote() -> str:
    return (
        f"Firestore at list price: ${WRITE_PRICE_PER_100K} per 100,000 writes, "
        f"${READ_PRICE_PER_100K} per 100,000 reads ({FIRESTORE_PRICING}); reads are counted "
        "per call as the adapters count them, roughly (firestore_layout.py)."
    )


def limits_table() -> str:
    """The limits the model enforces, as docs/scale.md shows them (a test keeps them equal)."""
    lines = [
        "| System | Limit | Documented value | What the model does | Source |",
        "|---|---|---|---|---|",
    ]
    for limit in LIMITS:
        cells = (limit.system, limit.name, limit.value, limit.enforced, limit.source)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
