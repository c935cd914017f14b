"""At most ``max_in_flight`` model calls at once across every process and instance, as host
slots cap a site: slots of the shared host gate under one key per provider
(``ai~<provider>~0``), leased for a call's length and given back after it.

A process never holds more than ``max_in_flight`` itself, so its tasks first queue for one of
that many local turns (no I/O); of the tasks holding a turn, one at a time asks the gate (the
next asks as soon as it has its slot, or at once when a call of this process ends). However
many tasks a delivery brings, a process sends the gate's document one asker, every
``WAIT_STEP_S`` at most while the gate is full: every task of every delivery polling the
gate cost plain fetching about a fifth of its throughput beside model work (bench/README.md,
workload M)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from datetime import timedelta

from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.politeness.host_gate import HostGate, HostLimits, Permit
from scrapejobs_worker.ai.model_port import ModelBusy

WAIT_STEP_S = 0.5  # a full gate is looked at again this often
BUSY = "every model slot is taken (SCRAPEJOBS_AI_MAX_IN_FLIGHT)"


class ModelSlots:
    def __init__(
        self,
        gate: HostGate,
        provider: str,
        max_in_flight: int,
        clock: Clock,
        call_timeout_s: float,
    ) -> None:
        self._gate = gate
        self.max_in_flight = max_in_flight
        self._turns = asyncio.Semaphore(max_in_flight)  # this process's calls and askers
        self._asking = asyncio.Lock()  # the one task of this process asking the gate
        self._freed = asyncio.Event()  # a call of this process gave its slot back
        self.key = f"ai~{provider}~0"
        self._limits = HostLimits(concurrency=max_in_flight)
        self._clock = clock
        self._lease = timedelta(seconds=call_timeout_s * 3)  # a call and its retries

    @asynccontextmanager
    async def held(self, until: float) -> AsyncIterator[None]:
        """A slot for one answer (its calls and its repair), waited for until the monotonic
        time ``until``; ``ModelBusy`` when none came free by then."""
        await _before(until, self._turns.acquire())
        try:
            permit = await self._acquire(until)
            try:
                yield
            finally:
                await self._gate.release(permit)
                self._freed.set()
        finally:
            self._turns.release()

    async def _acquire(self, until: float) -> Permit:
        await _before(until, self._asking.acquire())
        try:
            while True:
                self._freed.clear()
                now = self._clock()
                got = await self._gate.acquire(self.key, self._limits, now + self._lease, now)
                if isinstance(got, Permit):
                    return got
                wait_s = min(max(got.wait_s, 0.05), WAIT_STEP_S)
                if time.monotonic() + wait_s >= until:
                    raise ModelBusy(BUSY)
                with contextlib.suppress(TimeoutError):  # or sooner: a slot came free here
                    await asyncio.wait_for(self._freed.wait(), wait_s)
        finally:
            self._asking.release()


async def _before(until: float, waited: Awaitable[object]) -> None:
    """``waited``, or ``ModelBusy`` when it has not happened by the monotonic time ``until``."""
    try:
        async with asyncio.timeout(max(0.0, until - time.monotonic())):
            await waited
    except TimeoutError:
        raise ModelBusy(BUSY) from None
