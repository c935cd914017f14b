"""The port through which a service runs a computation whose cost a caller controls.

A page comparison of two versions a stranger's site served, a crawl's include/exclude patterns
over a page's links: work whose CPU, memory and output size follow what a caller wrote or a
site sent. Each call names its :class:`Budget` (CPU seconds, memory, output size; wall time
follows from the CPU); past one of them the call raises :class:`OverBudget` naming it and the
setting that sets it, and the service goes on (its event loop never ran the work).

The adapter that holds the budgets is ``adapters/budgeted_processes.py`` (processes of their
own, limits held by the kernel); ``adapters/memory/budgeted_work.py`` is the twin for unit
tests (a thread: the output size is held, the CPU and memory are not).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol, TypeVar

from scrapejobs_shared.errors import WorkFailed

T = TypeVar("T")
Exceeded = Literal["cpu", "memory", "output", "wall"]


@dataclass(frozen=True, slots=True)
class Budget:
    """What one call may use. ``name`` says what the work is (``page comparison``),
    ``setting`` where an operator changes the CPU budget; ``owner`` whose work it is (a
    tenant: calls waiting for a process take turns by owner)."""

    name: str
    setting: str
    cpu_s: float
    memory_mb: int = 512  # what the process may grow by during the call (0: no limit)
    output_bytes: int = 32 << 20  # the answer, pickled (0: no limit)
    owner: str = ""
    # CPU the work may add as it goes, in steps each within a budget of its own (a document's
    # pages read by OCR: processes/limits.extend_cpu): counted in the wall time only
    extendable_s: float = 0.0

    @property
    def wall_s(self) -> float:
        """How long a call may take before it is ended whatever its CPU (a process that
        waits without using CPU, or one starved of it)."""
        return 3 * (self.cpu_s + self.extendable_s + 1) + 5


class OverBudget(WorkFailed):
    """A call passed its budget and was stopped: ``exceeded`` says which part."""

    code = "over_budget"

    def __init__(self, budget: Budget, exceeded: Exceeded) -> None:
        super().__init__(_said(budget, exceeded))
        self.budget = budget
        self.exceeded = exceeded


def _said(budget: Budget, exceeded: Exceeded) -> str:
    if exceeded == "cpu":
        return f"the {budget.name} used more than {budget.cpu_s:g} s of CPU ({budget.setting})"
    if exceeded == "memory":
        return f"the {budget.name} needed more than {budget.memory_mb} MiB of memory"
    if exceeded == "output":
        return f"the {budget.name}'s answer was larger than {budget.output_bytes >> 10} KiB"
    return f"the {budget.name} took more than {budget.wall_s:g} s"


class BudgetedWork(Protocol):
    async def run(self, budget: Budget, call: Callable[..., T], *args: object) -> T:
        """``call(*args)`` within ``budget``: its value, the exception it raised, or
        :class:`OverBudget`. ``call`` and its arguments cross to another process: a
        module-level function, and values that pickle."""
        ...
