"""A deadline on every publish, through the client library's own ``retry`` and ``timeout``
arguments: a publish and its retries end within ``timeout_s`` together (the library turns a
number into a time to deadline that the attempts share). Publishing again is harmless here (a
batch is claimed by one delivery at a time), so whatever Pub/Sub may get right on another
attempt is retried, never past the deadline.

``outage_of`` names what a failed publish raised when Pub/Sub did not answer in time:
``DependencyUnavailable("Pub/Sub", timeout_s)``, the original error chained."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from google.api_core import exceptions as gexc
from google.api_core import retry

from scrapejobs_shared.ports.dependency_unavailable import PUBSUB, DependencyUnavailable

DEFAULT_TIMEOUT_S = 5.0
RETRIED = (
    gexc.Aborted,
    gexc.DeadlineExceeded,
    gexc.InternalServerError,
    gexc.ResourceExhausted,
    gexc.ServiceUnavailable,
    gexc.Unknown,
)
OUTAGES: tuple[type[BaseException], ...] = (
    gexc.DeadlineExceeded,
    gexc.ServiceUnavailable,
    gexc.RetryError,
    TimeoutError,
)


@dataclass(frozen=True)
class PublishDeadline:
    timeout_s: float = DEFAULT_TIMEOUT_S
    call: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        policy = retry.Retry(
            predicate=retry.if_exception_type(*RETRIED),
            initial=0.1,
            maximum=1.0,
            multiplier=2.0,
            timeout=self.timeout_s,
        )
        object.__setattr__(self, "call", {"retry": policy, "timeout": self.timeout_s})

    def outage_of(self, error: BaseException) -> BaseException:
        """``error``, or the ``DependencyUnavailable`` it means (its cause set to it)."""
        if not isinstance(error, OUTAGES):
            return error
        outage = DependencyUnavailable(PUBSUB, self.timeout_s)
        outage.__cause__ = error
        return outage
