"""How many uploads an instance holds, and whose turn it is to be read.

An upload is held from before its body is read until its answer: received (spooled by the
multipart parser), waiting for a parse process, read. An instance holds at most ``held`` at
once (``SCRAPEJOBS_PARSE_QUEUE``), so what waiting uploads keep in memory (or on Cloud Run's
in-memory disk) is bounded before their bodies are read: one more is a ``503`` with
``Retry-After`` (:class:`UploadsBusy`); one tenant holds at most half of them (at least one),
one past that a ``429`` (:class:`TenantUploadsBusy`), so another tenant always finds room.
The parse processes (``SCRAPEJOBS_PARSE_PROCESSES``) go to the tenants waiting in turns (round
robin; a tenant's own uploads in their order): a tenant's slow uploads make another tenant's
small one wait for one read, not for all of theirs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from scrapejobs_shared.errors import OverQuota, Unavailable
from scrapejobs_shared.tenant_turns import TenantTurns

RETRY_AFTER_S = 5


class UploadsBusy(Unavailable):
    """The instance holds as many uploads as it may: ``503``, try again shortly."""

    code = "uploads_busy"

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(RETRY_AFTER_S)}


class TenantUploadsBusy(OverQuota):
    """The tenant holds its share of the instance's uploads: ``429``, try again shortly."""

    code = "uploads_busy"

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(RETRY_AFTER_S)}


@dataclass(eq=False)
class UploadSlots:
    reading: int  # uploads read at once (parse processes)
    held: int  # uploads held at once: received, waiting or read
    _holding: dict[str, int] = field(init=False, default_factory=dict)
    _turns: TenantTurns = field(init=False)

    def __post_init__(self) -> None:
        self._turns = TenantTurns(self.reading)

    @property
    def per_tenant(self) -> int:
        return max(1, self.held // 2)

    @contextlib.contextmanager
    def holding(self, tenant: str) -> Iterator[None]:
        """Hold a place for ``tenant``'s upload (before its body is read), or refuse it."""
        if sum(self._holding.values()) >= self.held:
            raise UploadsBusy(
                f"this instance holds {self.held} uploads, as many as it may "
                "(SCRAPEJOBS_PARSE_QUEUE); try again shortly"
            )
        if self._holding.get(tenant, 0) >= self.per_tenant:
            raise TenantUploadsBusy(
                f"this tenant holds {self.per_tenant} uploads of this instance's "
                f"{self.held} (SCRAPEJOBS_PARSE_QUEUE), its share; try again shortly"
            )
        self._holding[tenant] = self._holding.get(tenant, 0) + 1
        try:
            yield
        finally:
            left = self._holding[tenant] - 1
            if left:
                self._holding[tenant] = left
            else:
                del self._holding[tenant]

    def turn(self, tenant: str) -> contextlib.AbstractAsyncContextManager[None]:
        """A parse process for ``tenant``'s upload, in the tenants' turns."""
        return self._turns.turn(tenant)
