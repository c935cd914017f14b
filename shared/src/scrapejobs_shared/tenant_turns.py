"""A few slots that owners waiting for them take in turns (round robin; an owner's own waits in
their order): a semaphore where one owner's queue makes another's wait for one turn, not for
all of its own. Owners are tenants (uploads read, budgeted calls)."""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict, deque
from collections.abc import AsyncIterator


class TenantTurns:
    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError("at least one slot")
        self._free = slots
        self._waiting: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()

    @contextlib.asynccontextmanager
    async def turn(self, owner: str) -> AsyncIterator[None]:
        """A slot for ``owner``, in the owners' turns."""
        if self._free and not self._waiting:
            self._free -= 1
        else:
            granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiting.setdefault(owner, deque()).append(granted)
            try:
                await granted
            except asyncio.CancelledError:
                if granted.done() and not granted.cancelled():
                    self._pass_on()  # granted as it was cancelled: the next one's
                else:
                    self._forget(owner, granted)
                raise
        try:
            yield
        finally:
            self._pass_on()

    def _pass_on(self) -> None:
        """A slot came free: the next owner in turn takes it (and goes to the back)."""
        while self._waiting:
            owner, queue = next(iter(self._waiting.items()))
            granted = queue.popleft()
            del self._waiting[owner]
            if queue:
                self._waiting[owner] = queue  # its next one waits for its next turn
            if not granted.done():
                granted.set_result(None)
                return
        self._free += 1

    def _forget(self, owner: str, granted: asyncio.Future[None]) -> None:
        queue = self._waiting.get(owner)
        if queue is not None and granted in queue:
            queue.remove(granted)
            if not queue:
                del self._waiting[owner]
