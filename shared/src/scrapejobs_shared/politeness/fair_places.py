"""Places at one host in one process, taken in turns by tenant, by priority within a tenant.

An ``asyncio.Semaphore`` serves its waiters in arrival order: a tenant whose two batches put
sixteen lanes in line for a host's eight places makes another tenant's one lane wait behind all
of them. Here the waiters queue per tenant and a freed place goes to the next tenant in turn
(round robin); within a tenant, to its most urgent waiter (a lower ``rank``: the job's
priority lane), in arrival order within a rank. A tenant alone takes every place, as before.
"""

from __future__ import annotations

import asyncio
import collections
import heapq
import itertools

RANKS = {"high": 0, "normal": 1, "low": 2}  # a job's priority lane -> its rank among waiters


def rank_of(lane: str) -> int:
    """The rank of a job's lane (a lane that is no priority, such as render: normal)."""
    return RANKS.get(lane, RANKS["normal"])


class FairPlaces:
    def __init__(self, places: int) -> None:
        self._free = places
        # per tenant: its waiters by (rank, arrival)
        self._waiting: dict[str, list[tuple[int, int, asyncio.Future[None]]]] = {}
        self._turns: collections.deque[str] = collections.deque()  # tenants, next first
        self._arrivals = itertools.count()

    def locked(self) -> bool:
        return self._free <= 0

    async def acquire(self, tenant: str, timeout_s: float, rank: int = RANKS["normal"]) -> bool:
        """A place within ``timeout_s`` (at once or not at all when it is not positive)."""
        if self._free > 0 and not self._turns:
            self._free -= 1
            return True
        if timeout_s <= 0:
            return False
        place: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting.setdefault(tenant, []), (rank, next(self._arrivals), place))
        if tenant not in self._turns:
            self._turns.append(tenant)
        try:
            async with asyncio.timeout(timeout_s):
                await asyncio.shield(place)
        except TimeoutError:
            if place.done():  # handed over as the wait ran out: it is ours
                return True
            self._forget(tenant, place)
            return False
        except asyncio.CancelledError:
            if place.done():
                self.release()  # handed over, but its taker is gone: the next one takes it
            else:
                self._forget(tenant, place)
            raise
        return True

    def _forget(self, tenant: str, place: asyncio.Future[None]) -> None:
        """A waiter gave up: out of its tenant's line (and the tenant out of the turns when
        nobody of it waits any more), so that a free place is never kept from a newcomer."""
        place.cancel()
        waiting = self._waiting.get(tenant)
        if waiting is None:
            return
        kept = [entry for entry in waiting if entry[2] is not place]
        heapq.heapify(kept)
        if kept:
            self._waiting[tenant] = kept
            return
        del self._waiting[tenant]
        if tenant in self._turns:
            self._turns.remove(tenant)

    def release(self) -> None:
        """Give a place back: to the next waiting tenant in turn, else to the free ones."""
        if not self._turns:
            self._free += 1
            return
        tenant = self._turns.popleft()
        waiting = self._waiting[tenant]
        heapq.heappop(waiting)[2].set_result(None)
        if waiting:
            self._turns.append(tenant)  # its next waiter, after the other tenants
        else:
            del self._waiting[tenant]
