"""docs/scale.md shows the limits the model enforces as the model has them, and names every
workload ``make scale`` runs."""

from __future__ import annotations

from pathlib import Path

from scrapejobs_scale.report import limits_table
from scrapejobs_scale.workloads import WORKLOADS

DOC = Path(__file__).resolve().parents[3] / "docs" / "scale.md"


def test_the_limits_table_in_the_docs_is_the_models() -> None:
    assert limits_table() in DOC.read_text(encoding="utf-8"), "uv run scale --limits"


def test_the_docs_name_every_workload() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert all(f"`{key}`" in text for key in WORKLOADS)
