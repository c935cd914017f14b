"""The submission pipeline: the rules a job passes before it is stored, in order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from scrapejobs_shared.domain.jobspec import JobRequest, JobSpec

JobShape = JobRequest | JobSpec  # what is submitted, or what a retry or replay runs again


@dataclass(frozen=True, slots=True)
class Admission:
    """What the accepted work may take, and for whom."""

    tenant: str
    pages: int  # the most pages it may fetch: its URLs, its crawl's limit, the tasks replayed
    key: str  # what its pages are reserved under: the job's id (a replay: its own)
    at: datetime  # when it is accepted (its quota day)


class ShapeRule(Protocol):
    """A rule of what a job may be: raises (a ``ValueError`` naming the field) otherwise."""

    async def check(self, job: JobShape, tenant: str) -> None: ...


class AdmissionRule(Protocol):
    """A rule of what a job may take when it is accepted (the tenant's quota)."""

    async def admit(self, admission: Admission) -> None: ...

    async def release(self, admission: Admission, unused: int, final: bool = False) -> None:
        """The work accepted as ``admission`` will not use ``unused`` of its pages (``final``:
        it has ended)."""


class SubmissionRules:
    def __init__(
        self, shape: Sequence[ShapeRule] = (), admission: Sequence[AdmissionRule] = ()
    ) -> None:
        self._shape = tuple(shape)
        self._admission = tuple(admission)

    async def check_shape(self, job: JobShape, tenant: str) -> None:
        """Whether ``job`` (of ``tenant``) is one this deployment runs (a monitor's definition
        too)."""
        for rule in self._shape:
            await rule.check(job, tenant)

    async def admit(self, job: JobShape, admission: Admission) -> None:
        """Every rule, shape first: the work may be stored and published."""
        await self.check_shape(job, admission.tenant)
        for rule in self._admission:
            await rule.admit(admission)

    async def release(self, admission: Admission, unused: int, final: bool = False) -> None:
        for rule in self._admission:
            await rule.release(admission, unused, final)
