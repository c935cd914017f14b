"""What every adapter raises when the service behind it does not answer within its deadline
(or says it is unavailable): the caller answers at once, with a clear error, rather than hang.

A write that ran out of time may still have been applied: ``DependencyUnavailable`` says the
outcome is unknown, not that nothing happened."""

from __future__ import annotations

import math
from typing import Any

from scrapejobs_shared.errors import Unavailable

FIRESTORE = "Firestore"
PUBSUB = "Pub/Sub"
CLOUD_STORAGE = "Cloud Storage"


class DependencyUnavailable(Unavailable):
    """``dependency`` (a name a person reads: "Firestore", "Pub/Sub") did not answer within
    ``timeout_s`` seconds, or refused for now."""

    def __init__(self, dependency: str, timeout_s: float) -> None:
        super().__init__(f"{dependency} did not answer within {timeout_s:g} s")
        self.dependency = dependency
        self.timeout_s = timeout_s

    @property
    def message(self) -> str:
        return f"{self}; retry later"

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(max(1, math.ceil(self.timeout_s)))}

    def details(self) -> dict[str, Any]:
        return {"dependency": self.dependency}


class Contended(DependencyUnavailable):
    """``dependency`` refused a write for now: too many writes at once to one document, or
    transactions on it that kept aborting each other (Firestore's ``ABORTED``, "Too much
    contention on these datastore entities"), after the adapter's own retries. Nothing of the
    refused write was applied."""

    def __init__(self, dependency: str, document: str = "") -> None:
        super().__init__(dependency, 1.0)
        self.document = document
        self.args = (f"{dependency} refused a write to a busy document{_named(document)}",)

    def details(self) -> dict[str, Any]:
        return {"dependency": self.dependency, "reason": "contention"}


def _named(document: str) -> str:
    return f" ({document})" if document else ""
