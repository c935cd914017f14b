"""HostGate on Firestore: ``hosts/{host}`` (spacing, breaker), ``hosts/{host}/slots/{n}``, and
for a pace faster than one document takes, ``hosts/{host}/pace/{shard}`` (pace_grid.py).

Acquiring is optimistic, without transactions: one batched read of the host document and a
random slot document, then a write guarded by the read's update time (or ``create`` for a slot
never used). A lost race just tries the next free slot. Concurrent acquirers never hold locks on
each other's documents, and writes spread over the slot documents.

When the random slot is busy, the other slots are looked at. Once this instance has seen every
slot document of a host exist, that is one query for free slots (``lease_until`` in the past: a
released slot's is when its rest ends, ``slot_free_at`` in host_gate.py, from the last takes'
times its document keeps), which Firestore bills as the documents it returns, at least one:
refusing a host whose slots are all held costs 3 reads (the host document, the random slot,
the query) instead of 2 + its slot count. A host this
instance found full within ``FULL_FOR`` (its lanes wait and ask again) is queried at once,
without the random slot: 2 reads per refusal.
The first look at a host this instance never touched reads only the host document and creates a
random slot blindly (a new host has no slot documents; if that one exists, the create fails and
the usual looks follow). A look that finds several free slots keeps the others for
``SPARE_FOR``: the instance's next acquisitions of the host try them first with no read at all
(their writes are guarded by the snapshots' update times, so a slot taken by someone else since
is just a lost race), trusting the host document read with them for as long, as warm slots do.
Until every slot document is known to exist, again every ``COMPLETE_FOR`` (so that a slot
document deleted by its TTL is noticed), and when the query's free slots are all beyond a job's
smaller limit, the look reads every slot document. (A slot released before releases wrote a
lease has none at all: the random look finds it.)
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections import OrderedDict
from collections.abc import AsyncGenerator
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, TypeVar

from google.api_core import exceptions as gexc
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from scrapejobs_shared.adapters.firestore.call_deadline import CallDeadline, reports_outages
from scrapejobs_shared.adapters.firestore.collection_adapter import CollectionAdapter
from scrapejobs_shared.observability.store_ops import count
from scrapejobs_shared.politeness import host_gate as gate
from scrapejobs_shared.politeness.pace_grid import PaceGrid

RETENTION = timedelta(days=7)
PROBE_SLOTS = 1  # one random slot first: with warm slots a fresh take is rare, and a read
# of a document is the emulator's most expensive operation (measured: bench/README.md)
LOST_RACE = (gexc.FailedPrecondition, gexc.AlreadyExists, gexc.NotFound, gexc.Aborted)
FREE_QUERY_LIMIT = 4  # free slots one query returns: lost races try the next
COMPLETE_FOR = timedelta(minutes=5)  # how long "every slot document exists" is trusted
COMPLETE_HOSTS_KEPT = 4096  # hosts remembered as complete or full, most recent first
SPARE_FOR = timedelta(seconds=1)  # how long free slots a look found are tried without a read
# (the host document read with them is as old: warm slots trust one of that age too)
FULL_FOR = timedelta(seconds=2)  # a host found full is queried first for this long: longer
# than a lane's pause between asks of a full host (worker politeness: MAX_FULL_BACKOFF_S)
_V = TypeVar("_V")


@reports_outages
class FirestoreHostGate(CollectionAdapter, gate.StoreSlots):
    collection = "hosts"

    def __init__(self, client: Any, deadline: CallDeadline | None = None) -> None:
        super().__init__(client, deadline)
        self._complete: OrderedDict[str, tuple[int, datetime]] = OrderedDict()
        self._full: OrderedDict[str, datetime] = OrderedDict()
        self._spares: OrderedDict[str, _Spare] = OrderedDict()
        self._seen: OrderedDict[str, bool] = OrderedDict()

    def _slot(self, host: str, slot: int) -> Any:
        return self._collection.document(host).collection("slots").document(str(slot))

    async def acquire(
        self, host: str, limits: gate.HostLimits, lease_until: datetime, now: datetime
    ) -> gate.Permit | gate.Throttle:
        spare = self._spares.pop(host, None)
        looks = self._looks(host, limits.concurrency, now)
        if spare is not None and now < spare.read_at + SPARE_FOR and not limits.min_interval_s:
            looks = _chain(spare.look(limits.concurrency), looks)
        async with contextlib.aclosing(looks):
            async for host_snap, candidates in looks:
                signals = _signals(host_snap)
                if throttle := signals.throttle(now):
                    return throttle
                for n, (slot, snap) in enumerate(candidates):
                    if not _is_free(snap, now):
                        continue
                    held = await self._take(snap, lease_until, now)
                    if held is None:
                        continue
                    self._full.pop(host, None)
                    read_at = spare.read_at if spare and host_snap is spare.host_snap else now
                    self._keep_spares(host, host_snap, candidates[n + 1 :], read_at, now)
                    free_at = gate.slot_free_at(held.takes)
                    permit = gate.Permit(host, slot, held, signals.failures, free_at=free_at)
                    if grid := PaceGrid.of(limits):
                        return await self._on_grid(permit, grid, now)
                    if limits.min_interval_s and not await self._space(host_snap, limits, now):
                        await self.release(permit)
                        return gate.Throttle(0.05, "rate")
                    return permit
        _remember(self._full, host, now)
        return gate.Throttle(0.2, "concurrency")

    def _keep_spares(
        self,
        host: str,
        host_snap: Any,
        rest: list[tuple[int, Any]],
        read_at: datetime,
        now: datetime,
    ) -> None:
        """Free slots a look found beyond the one taken: the next acquisition of the host
        tries them first, without reading (a write guarded by the snapshot's update time
        fails harmlessly if another acquirer took the slot since)."""
        free = [(slot, snap) for slot, snap in rest if _is_free(snap, now) and snap.exists]
        if free:
            _remember(self._spares, host, _Spare(host_snap, free, read_at))

    async def _looks(
        self, host: str, concurrency: int, now: datetime
    ) -> AsyncGenerator[tuple[Any, list[tuple[int, Any]]], None]:
        """The host document with slots to try, in up to two looks. Usually a host has free
        slots: one random slot first; the others only if it is busy (one query, once every
        slot document is known to exist). A host found full a moment ago: the query first. A
        host this instance never touched: the host document alone, and a blind ``create`` of a
        random slot (a host seen for the first time usually has no slot documents at all: a
        broad crawl pays one read per host, not two); if that slot exists, the usual looks."""
        if not self._seen.get(host):
            _remember(self._seen, host, True)
            count(reads=1)
            host_snap = await self._collection.document(host).get(**self._deadline.call)
            order = list(range(concurrency))
            random.shuffle(order)
            yield host_snap, [(order[0], _Unread(self._slot(host, order[0])))]
        known = self._known_complete(host, concurrency, now)
        if known and self._found_full(host, now):
            if (queried := await self._query_free(host, concurrency, now)) is not None:
                yield queried
                return
            known = False  # its answer lies beyond the limit: asking again would not help
        slots = list(range(concurrency))
        random.shuffle(slots)
        probe, rest = slots[:PROBE_SLOTS], slots[PROBE_SLOTS:]
        host_snap, candidates = await self._read_slots(host, probe)
        yield host_snap, candidates
        if not rest:
            return
        if (
            known
            and (queried := await self._query_free(host, concurrency, now, host_snap)) is not None
        ):
            yield queried
            return
        host_snap, candidates = await self._read_slots(host, rest)
        if all(snap.exists for _, snap in candidates):
            self._remember_complete(host, concurrency, now)
        yield host_snap, candidates

    async def _read_slots(self, host: str, slots: list[int]) -> tuple[Any, list[tuple[int, Any]]]:
        """The host document and the given slot documents, in one batched read."""
        host_ref = self._collection.document(host)
        refs = [host_ref] + [self._slot(host, n) for n in slots]
        count(reads=len(refs))
        snaps = {
            snap.reference.path: snap
            async for snap in self._client.get_all(refs, **self._deadline.call)
        }
        slot_snaps = [(n, snaps[ref.path]) for n, ref in zip(slots, refs[1:], strict=True)]
        return snaps[host_ref.path], slot_snaps

    async def _query_free(
        self, host: str, concurrency: int, now: datetime, host_snap: Any = None
    ) -> tuple[Any, list[tuple[int, Any]]] | None:
        """The host document (read unless given) and up to ``FREE_QUERY_LIMIT`` free slots
        under ``concurrency``, in random order (concurrent acquirers get the same answer: they
        should not all try its first slot); None when the query filled its limit with slots
        beyond ``concurrency``, so that it cannot tell whether one under it is free."""
        host_ref = self._collection.document(host)
        query = (
            host_ref.collection("slots")
            .where(filter=FieldFilter("lease_until", "<=", now))
            .limit(FREE_QUERY_LIMIT)
        )

        async def free_slots() -> list[Any]:
            return [snap async for snap in query.stream(**self._deadline.call)]

        if host_snap is None:
            host_snap, found = await asyncio.gather(
                host_ref.get(**self._deadline.call), free_slots()
            )
            count(reads=1)
        else:
            found = await free_slots()
        count(reads=max(len(found), 1))
        numbered = ((_slot_number(snap.id), snap) for snap in found)
        usable = [(n, snap) for n, snap in numbered if n is not None and n < concurrency]
        if not usable and len(found) == FREE_QUERY_LIMIT:
            return None
        random.shuffle(usable)
        return host_snap, usable

    def _known_complete(self, host: str, concurrency: int, now: datetime) -> bool:
        known = self._complete.get(host)
        return known is not None and known[0] >= concurrency and now < known[1]

    def _remember_complete(self, host: str, concurrency: int, now: datetime) -> None:
        _remember(self._complete, host, (concurrency, now + COMPLETE_FOR))

    def _found_full(self, host: str, now: datetime) -> bool:
        found = self._full.get(host)
        return found is not None and now - found < FULL_FOR

    async def _take(self, snap: Any, lease_until: datetime, now: datetime) -> _Held | None:
        earlier = (snap.to_dict() or {}).get("takes") or []
        takes = gate.slot_takes(earlier, now)
        fields = {
            "lease_until": lease_until,
            "expire_at": lease_until + RETENTION,
            "takes": list(takes),
        }
        try:
            if snap.exists:
                option = self._client.write_option(last_update_time=snap.update_time)
                count(writes=1)
                result = await snap.reference.update(fields, option=option, **self._deadline.call)
            else:
                count(writes=1)
                result = await snap.reference.create(fields, **self._deadline.call)
        except LOST_RACE:
            return None
        return _Held(result.update_time, takes)

    async def _space(self, host_snap: Any, limits: gate.HostLimits, now: datetime) -> bool:
        """Reserve the next request start on the host document (guarded write)."""
        next_at = (host_snap.to_dict() or {}).get("next_at")
        start = max(now, next_at) if next_at else now
        fields = {
            "next_at": start + timedelta(seconds=limits.min_interval_s),
            "expire_at": now + RETENTION,
        }
        try:
            if host_snap.exists:
                option = self._client.write_option(last_update_time=host_snap.update_time)
                count(writes=1)
                await host_snap.reference.update(fields, option=option, **self._deadline.call)
            else:
                count(writes=1)
                await host_snap.reference.create(fields, **self._deadline.call)
        except LOST_RACE:
            return False
        return True

    async def _on_grid(
        self, permit: gate.Permit, grid: PaceGrid, now: datetime
    ) -> gate.Permit | gate.Throttle:
        """A fast pace (pace_grid.py): the slot taken, an instant of the grid for it; an
        instant already taken, or lost to a racer, gives the slot back."""
        starts_at = await self._instant(permit.host, grid, now)
        if starts_at is None:
            await self.release(permit)
            return gate.Throttle(grid.interval_s, "rate")
        return replace(permit, starts_at=starts_at)

    async def take_instant(
        self, host: str, limits: gate.HostLimits, now: datetime
    ) -> datetime | gate.Throttle:
        if (grid := PaceGrid.of(limits)) is None:
            return now
        starts_at = await self._instant(host, grid, now)
        return gate.Throttle(grid.interval_s, "rate") if starts_at is None else starts_at

    async def _instant(self, host: str, grid: PaceGrid, now: datetime) -> datetime | None:
        """An instant of the grid, taken on its shard's document (``hosts/{host}/pace/
        {shard}``) by a write guarded by the read (None: taken already, or lost to a racer)."""
        instant = grid.pick(now)
        ref = self._collection.document(host).collection("pace").document(str(instant.shard))
        count(reads=1)
        snap = await ref.get(**self._deadline.call)
        next_at = (snap.to_dict() or {}).get("next_at") if snap.exists else None
        if not grid.allows(next_at, instant):
            return None
        fields = {"next_at": grid.after(instant), "expire_at": now + RETENTION}
        try:
            count(writes=1)
            if snap.exists:
                option = self._client.write_option(last_update_time=snap.update_time)
                await ref.update(fields, option=option, **self._deadline.call)
            else:
                await ref.create(fields, **self._deadline.call)
        except LOST_RACE:
            return None
        return instant.start

    async def release(self, permit: gate.Permit) -> None:
        """The slot's lease ends when its rest does (``slot_free_at``: at once unless this
        was its fourth take in the window), guarded by the take's update time."""
        held: _Held = permit.token
        option = self._client.write_option(last_update_time=held.update_time)
        # A lost race means our lease lapsed and someone else holds the slot now.
        with contextlib.suppress(*LOST_RACE):
            count(writes=1)
            await self._slot(permit.host, permit.slot).update(
                {"lease_until": gate.slot_free_at(held.takes)},
                option=option,
                **self._deadline.call,
            )

    async def record_success(self, permit: gate.Permit, now: datetime) -> None:
        if permit.failures:
            count(writes=1)
            await self._collection.document(permit.host).set(
                {"failures": 0}, merge=True, **self._deadline.call
            )

    async def record_failure(self, host: str, policy: gate.BreakerPolicy, now: datetime) -> None:
        """One blind increment, no transaction: the write's transform result is the new count.
        Several fetches of one host failing at once (a host going down, or a batch's lanes all
        timing out together) then never contend for the host document; the one whose
        increment reaches the threshold opens the breaker and starts the count again."""
        ref = self._collection.document(host)
        commit = self._client.batch()
        commit.set(
            ref, {"failures": firestore.Increment(1), "expire_at": now + RETENTION}, merge=True
        )
        count(writes=1)
        [result] = await commit.commit(**self._deadline.call)
        failures = int(result.transform_results[0].integer_value)
        if failures >= policy.failure_threshold:
            open_until = now + timedelta(seconds=policy.cooldown_s)
            count(writes=1)
            await ref.set(
                {"failures": 0, "open_until": open_until}, merge=True, **self._deadline.call
            )

    async def close_breaker(self, host: str, now: datetime) -> bool:
        """One read; a write only when the breaker is open or a failure streak runs."""
        ref = self._collection.document(host)
        count(reads=1)
        signals = _signals(await ref.get(**self._deadline.call))
        if signals.open_until is None and not signals.failures:
            return False
        count(writes=1)
        await ref.set({"open_until": None, "failures": 0}, merge=True, **self._deadline.call)
        return signals.open_until is not None and signals.open_until > now

    async def hold(self, host: str, until: datetime) -> None:
        ref = self._collection.document(host)

        @firestore.async_transactional
        async def push_back(transaction: Any) -> None:
            count(reads=1, writes=1)
            snap = await ref.get(transaction=transaction, **self._deadline.call)
            current = (snap.to_dict() or {}).get("next_at")
            if current is None or current < until:
                transaction.set(ref, {"next_at": until, "expire_at": until + RETENTION}, merge=True)

        await push_back(self._client.transaction())

    async def signals(self, host: str) -> gate.HostSignals:
        count(reads=1)
        return _signals(await self._collection.document(host).get(**self._deadline.call))

    async def state(self, host: str, now: datetime) -> gate.HostState:
        signals = await self.signals(host)
        slots = self._collection.document(host).collection("slots")
        busy = (
            await slots.where(filter=FieldFilter("lease_until", ">", now))
            .count()
            .get(**self._deadline.call)
        )
        return gate.HostState(
            host, signals.next_at, signals.open_until, signals.failures, int(busy[0][0].value)
        )

    async def paused(self, now: datetime, limit: int) -> list[gate.PausedHost]:
        async def hosts_with(field: str, after: datetime, reason: str) -> list[gate.PausedHost]:
            query = self._collection.where(filter=FieldFilter(field, ">", after)).limit(limit)
            found = [
                gate.PausedHost(s.id, s.get(field), reason)
                async for s in query.stream(**self._deadline.call)
            ]
            count(reads=max(len(found), 1))
            return found

        broken = await hosts_with("open_until", now, "circuit_open")
        held = await hosts_with("next_at", now + gate.PAUSE_AFTER, "held")
        return gate.merge_paused(broken + held, limit)

    async def want(self, host: str, wanter: str, until: datetime) -> None:
        """``hosts/{host}/wants/{wanter}``: one document per waiting process, so wanters never
        write the same document (the host's stays as quiet as before)."""
        count(writes=1)
        fields = {"until": until, "expire_at": until + RETENTION}
        await self._wants(host).document(wanter).set(fields, **self._deadline.call)

    async def wanting(self, host: str, now: datetime) -> frozenset[str]:
        query = (
            self._wants(host).where(filter=FieldFilter("until", ">", now)).limit(gate.WANTERS_READ)
        )
        found = [snap.id async for snap in query.stream(**self._deadline.call)]
        count(reads=max(len(found), 1))
        return frozenset(found)

    def _wants(self, host: str) -> Any:
        return self._collection.document(host).collection("wants")


@dataclass(frozen=True, slots=True)
class _Held:
    """A permit's token: the take's update time (which guards the give-back) and the slot's
    take times, the new one last (its rest)."""

    update_time: Any
    takes: tuple[datetime, ...]


@dataclass(frozen=True, slots=True)
class _Unread:
    """A slot document not read: taken with ``create``, which fails if it exists."""

    reference: Any
    exists: bool = False
    update_time: Any = None

    def to_dict(self) -> None:
        return None


@dataclass(frozen=True, slots=True)
class _Spare:
    host_snap: Any
    slots: list[tuple[int, Any]]
    read_at: datetime

    async def look(self, concurrency: int) -> AsyncGenerator[tuple[Any, list[tuple[int, Any]]]]:
        yield self.host_snap, [(slot, snap) for slot, snap in self.slots if slot < concurrency]


async def _chain(*looks: AsyncGenerator[_V]) -> AsyncGenerator[_V]:
    for look in looks:
        async with contextlib.aclosing(look):
            async for item in look:
                yield item


def _remember(memory: OrderedDict[str, _V], host: str, value: _V) -> None:
    """Remember ``value`` for ``host``, forgetting the least recently set hosts beyond
    ``COMPLETE_HOSTS_KEPT``."""
    memory[host] = value
    memory.move_to_end(host)
    while len(memory) > COMPLETE_HOSTS_KEPT:
        memory.popitem(last=False)


def _signals(host_snap: Any) -> gate.HostSignals:
    doc = host_snap.to_dict() or {}
    return gate.HostSignals(
        doc.get("next_at"), doc.get("open_until"), int(doc.get("failures") or 0)
    )


def _slot_number(doc_id: str) -> int | None:
    return int(doc_id) if doc_id.isdigit() else None


def _is_free(snap: Any, now: datetime) -> bool:
    lease = (snap.to_dict() or {}).get("lease_until") if snap.exists else None
    return lease is None or lease <= now
