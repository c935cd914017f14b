"""Where a bundle's batches meet for one store call: their claims.

``handle_push`` runs a bundle's batches side by side. Those the store can claim together (jobs
that hold their batch, claimed by their tokens: a bundle of one-URL jobs) each take a seat at
a ``Rendezvous``. A seat asks once, with its request, or leaves; the call runs for everyone
who asked once every seat has asked or left, or ``WAIT_S`` after the first ask, whichever
comes first. A seat that asks after the call went, or finds itself alone, is answered None:
its batch calls the store alone. So one slow batch holds the others back ``WAIT_S`` at most,
and a batch that ends without asking holds nobody back.

Their settles go alone. Settling a bundle's batches in one commit too (``settle_together``,
one outcome-stats write per bundle) was built and measured (session 16, bench/README.md):
it saved a quarter of C's stats writes, and made workload T's small jobs beside a large job
a third slower and the large job a fifth slower, whatever the wait (5 or 50 ms) and bundle
size; the cause is not found yet.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from typing import Generic, TypeVar

from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.messaging.task_message import BatchMessage
from scrapejobs_shared.ports.batch_store import BatchStore, ClaimResult, JointClaim

WAIT_S = 0.05  # the longest the first batch to ask waits for the others
Req = TypeVar("Req")
Res = TypeVar("Res")


class Rendezvous(Generic[Req, Res]):
    """``seats`` batches' requests gathered into one ``call`` (its answers in their order);
    each batch uses it through its ``Seat``."""

    def __init__(
        self,
        seats: int,
        call: Callable[[Sequence[Req]], Awaitable[Sequence[Res]]],
        wait_s: float = WAIT_S,
    ) -> None:
        self._open = seats  # seats that have neither asked nor left
        self._call = call
        self._wait_s = wait_s
        self._asks: list[tuple[Req, asyncio.Future[Res | None]]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._running: asyncio.Task[None] | None = None
        self._gone = False  # the call went (or nobody is left to ask)

    def seat(self) -> Seat[Req, Res]:
        return Seat(self)

    async def ask(self, request: Req) -> Res | None:
        if self._gone:
            return None
        answer: asyncio.Future[Res | None] = asyncio.get_running_loop().create_future()
        self._asks.append((request, answer))
        self._open -= 1
        if self._open <= 0:
            self._go()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self._wait_s, self._go)
        return await answer

    def leave(self) -> None:
        self._open -= 1
        if self._open <= 0 and self._asks:
            self._go()

    def _go(self) -> None:
        if self._gone:
            return
        self._gone = True
        if self._timer is not None:
            self._timer.cancel()
        asks, self._asks = self._asks, []
        if len(asks) == 1:  # alone: nothing to share
            _answer(asks[0][1], None)
            return
        self._running = asyncio.get_running_loop().create_task(self._call_for(asks))

    async def _call_for(self, asks: list[tuple[Req, asyncio.Future[Res | None]]]) -> None:
        try:
            answers = await self._call([request for request, _ in asks])
        except asyncio.CancelledError:
            for _, answer in asks:
                answer.cancel()
            raise
        except Exception as exc:  # each batch meets it as its own call would
            for _, answer in asks:
                if not answer.done():
                    answer.set_exception(exc)
            return
        for (_, answer), result in zip(asks, answers, strict=True):
            _answer(answer, result)


class Seat(Generic[Req, Res]):
    """One batch's place at a rendezvous: ``ask`` once (later asks are answered None), or
    ``leave``; leaving after asking does nothing."""

    def __init__(self, rendezvous: Rendezvous[Req, Res]) -> None:
        self._rendezvous = rendezvous
        self._used = False

    async def ask(self, request: Req) -> Res | None:
        if self._used:
            return None
        self._used = True
        return await self._rendezvous.ask(request)

    def leave(self) -> None:
        if not self._used:
            self._used = True
            self._rendezvous.leave()


ClaimSeat = Seat[JointClaim, ClaimResult]


class JointClaims:
    """A bundle's claims together: a rendezvous for the batches claimed by their tokens
    (one-URL jobs)."""

    def __init__(self, store: BatchStore, clock: Clock, lease: timedelta) -> None:
        self._store = store
        self._clock = clock
        self._lease = lease

    def seats(self, messages: Sequence[BatchMessage]) -> list[ClaimSeat | None]:
        """Each message's seat; None for a batch claimed alone (no token, or no other)."""
        joint = [message.claim_token is not None for message in messages]
        if sum(joint) < 2:
            return [None] * len(messages)
        claims = Rendezvous(sum(joint), self._claim_together)
        return [claims.seat() if j else None for j in joint]

    async def _claim_together(self, claims: Sequence[JointClaim]) -> list[ClaimResult]:
        now = self._clock()
        return await self._store.claim_together(claims, now, now + self._lease)


def joint_claim(message: BatchMessage) -> JointClaim:
    assert message.claim_token is not None, "only a batch claimed by its token has a seat"
    return JointClaim(message.job_id, message.batch_id, message.claim_token)


def _answer(answer: asyncio.Future[Res | None], result: Res | None) -> None:
    if not answer.done():  # its batch may have been cancelled meanwhile
        answer.set_result(result)
