"""A deadline on every Firestore call, through the client library's own arguments.

Each adapter spreads ``**deadline.call`` into every call it makes (``get``, ``get_all``,
``stream``, ``commit``, ``create``, ``update``, ``set``, ``delete``, aggregation ``get``):

* ``timeout``: the library turns a number into a time to deadline that the call's attempts
  share, so a call and its retries end within ``timeout_s`` together;
* ``retry``: only ``UNAVAILABLE`` (Firestore says the call was not applied) is retried, with
  backoff, and never past the deadline. Not ``DEADLINE_EXCEEDED`` (a write may have landed) nor
  ``RESOURCE_EXHAUSTED`` (a request over the size limit fails the same way every time; a quota
  passes in longer than the deadline): whoever called us (Pub/Sub, a client with an
  Idempotency-Key) retries, safely, later.

The library's transactions take no per-call arguments for their begin and commit; the reads
inside them do. ``reports_outages`` turns what a call raises when Firestore does not answer
into ``DependencyUnavailable("Firestore", timeout_s)`` at each public method of an adapter, and
a write refused for contention (``ABORTED`` outside a transaction) into ``Contended``."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from google.api_core import exceptions as gexc
from google.api_core import retry_async

from scrapejobs_shared.ports.dependency_unavailable import (
    FIRESTORE,
    Contended,
    DependencyUnavailable,
)

DEFAULT_TIMEOUT_S = 5.0
# What a call raises when Firestore does not answer in time, or says it cannot for now.
OUTAGES: tuple[type[BaseException], ...] = (
    gexc.DeadlineExceeded,
    gexc.ServiceUnavailable,
    gexc.RetryError,
)

T = TypeVar("T")


@dataclass(frozen=True)
class CallDeadline:
    timeout_s: float = DEFAULT_TIMEOUT_S
    call: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        retry = retry_async.AsyncRetry(
            predicate=retry_async.if_exception_type(gexc.ServiceUnavailable),
            initial=0.1,
            maximum=1.0,
            multiplier=2.0,
            timeout=self.timeout_s,
        )
        object.__setattr__(self, "call", {"timeout": self.timeout_s, "retry": retry})


def reports_outages(cls: type[T]) -> type[T]:
    """Class decorator: each public coroutine method of ``cls`` (an adapter with a
    ``_deadline: CallDeadline``) raises ``DependencyUnavailable`` when Firestore does not
    answer, the original error chained."""
    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and inspect.iscoroutinefunction(member):
            setattr(cls, name, _reporting(member))
    return cls


def _reporting(
    method: Callable[..., Coroutine[Any, Any, Any]],
) -> Callable[..., Coroutine[Any, Any, Any]]:
    @functools.wraps(method)
    async def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return await method(self, *args, **kwargs)
        except OUTAGES as exc:
            deadline: CallDeadline = self._deadline
            raise DependencyUnavailable(FIRESTORE, deadline.timeout_s) from exc
        except gexc.Aborted as exc:  # a write outside a transaction, to a busy document
            raise Contended(FIRESTORE) from exc

    return call
