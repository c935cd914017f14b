"""The submission pipeline: the rules a job passes before it is stored, in order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from scrapejobs_shared.domain.jobspec import JobRequest


@dataclass(frozen=True, slots=True)
class Submission:
    """What is submitted, and for whom."""

    request: JobRequest
    tenant: str
    pages: int = field(default=-1)  # the most pages it may fetch (-1: the request's own)

    @property
    def most_pages(self) -> int:
        return self.request.most_pages() if self.pages < 0 else self.pages


class ShapeRule(Protocol):
    """A rule of what a job may be: raises (a ``ValueError`` naming the field) otherwise."""

    async def check(self, request: JobRequest) -> None: ...


class AdmissionRule(Protocol):
    """A rule of what a job may take when it is accepted (the tenant's quota)."""

    async def admit(self, submission: Submission) -> None: ...


class SubmissionRules:
    def __init__(
        self, shape: Sequence[ShapeRule] = (), admission: Sequence[AdmissionRule] = ()
    ) -> None:
        self._shape = tuple(shape)
        self._admission = tuple(admission)

    async def check_shape(self, request: JobRequest) -> None:
        """Whether ``request`` is a job this deployment runs (a monitor's definition too)."""
        for rule in self._shape:
            await rule.check(request)

    async def admit(self, submission: Submission) -> None:
        """Every rule, shape first: the submission may be stored and published."""
        await self.check_shape(submission.request)
        for rule in self._admission:
            await rule.admit(submission)
