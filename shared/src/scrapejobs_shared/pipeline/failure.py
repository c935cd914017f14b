"""How a stage refuses a result, and how the pipeline reports it.

A stage raises :class:`StageRejected` with its problems (location → message); the runner turns
it into a :class:`PipelineFailure` naming the stage. Every refusal is permanent: the same data
and the same stage give the same answer, so the task ends ``failed`` with reason
:data:`VALIDATION` and is never retried.
"""

from __future__ import annotations

from typing import Any

from scrapejobs_shared.errors import WorkFailed

VALIDATION = "validation"
MAX_ERROR_CHARS = 1000


class StageRejected(WorkFailed):
    """The data does not pass a stage: ``problems`` maps a location to what is wrong there."""

    def __init__(self, problems: dict[str, str]) -> None:
        super().__init__(problems)
        self.problems = problems


class PipelineFailure(WorkFailed):
    """Stage ``index`` of the pipeline (from 0; ``stage`` its name) refused the data it
    received (``data``)."""

    def __init__(
        self, index: int, stage: str, problems: dict[str, str], data: dict[str, Any]
    ) -> None:
        super().__init__(index, stage, problems)
        self.reason = VALIDATION
        self.index = index
        self.stage = stage
        self.problems = problems
        self.data = data

    def __reduce__(self) -> tuple[type[PipelineFailure], tuple[Any, ...]]:
        """Pickled whole (it crosses from a budgeted process: ports/budgeted_work.py)."""
        return PipelineFailure, (self.index, self.stage, self.problems, self.data)

    @property
    def error(self) -> str:
        """The result's ``error``: ``validation: pipeline[1] (validate): $.price: ...; ...``."""
        listed = "; ".join(f"{where}: {what}" for where, what in self.problems.items())
        text = f"{self.reason}: pipeline[{self.index}] ({self.stage}): {listed}"
        return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"
