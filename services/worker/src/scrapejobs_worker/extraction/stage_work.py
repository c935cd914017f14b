"""The ``ai`` stage's work on the worker's own CPU, within the page's budget.

After a model answers, its answer is checked against the stage's schema and the job's later
stages run on it (``validate`` among them): schemas' ``pattern`` and ``patternProperties`` are
the caller's regular expressions, and RE2's slower engine makes some of them cost ~11 µs a
character. Both run through the budgeted-work port (ports/budgeted_work.py: a process of its
own, off the event loop) within the extraction's budget (``SCRAPEJOBS_EXTRACTION_BUDGET_S``);
past it the task fails ``extraction_timeout`` naming it, as a page's extraction would.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scrapejobs_shared.pipeline import run_pipeline
from scrapejobs_shared.pipeline.failure import StageRejected
from scrapejobs_shared.pipeline.spec import Stage
from scrapejobs_shared.pipeline.validate import validate
from scrapejobs_shared.ports.budgeted_work import Budget, BudgetedWork, OverBudget


class StagesOverBudget(OverBudget):
    """Checking an answer or running the later stages passed the budget."""

    def __init__(self, exceeded: OverBudget) -> None:
        super().__init__(exceeded.budget, exceeded.exceeded)
        self.error = f"extraction_timeout: {exceeded}"


@dataclass(frozen=True)
class StageWork:
    work: BudgetedWork
    budget: Budget

    async def checked(self, text: str, schema: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
        """The answer as an object the schema accepts, or None and what is wrong with it."""
        try:
            return await self.work.run(self.budget, answer_checked, text, schema)
        except OverBudget as exc:
            raise StagesOverBudget(exc) from None

    async def after(self, stages: Sequence[Stage], data: dict[str, Any]) -> dict[str, Any]:
        """``data`` through ``stages`` (``PipelineFailure`` when one refuses it)."""
        try:
            return await self.work.run(self.budget, run_pipeline, list(stages), data)
        except OverBudget as exc:
            raise StagesOverBudget(exc) from None


def answer_checked(text: str, schema: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The answer as an object the schema accepts, or None and what is wrong with it."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        return None, f"not JSON ({exc})"
    if not isinstance(value, dict):
        return None, f"a JSON {type(value).__name__}, not an object"
    try:
        validate(schema, value)
    except StageRejected as exc:
        return None, "; ".join(f"{path}: {why}" for path, why in exc.problems.items())
    return value, ""
