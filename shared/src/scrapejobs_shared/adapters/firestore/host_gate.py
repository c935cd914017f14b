"""HostGate on Firestore: ``hosts/{host}`` (spacing, breaker) and ``hosts/{host}/slots/{n}``.

Acquiring is optimistic, without transactions: one batched read of the host document and its
slot documents, then a write guarded by the read's update time (or ``create`` for a slot never
used). A lost race just tries the next free slot. Concurrent acquirers never hold locks on each
other's documents, and writes spread over the slot documents.
"""

from __future__ import annotations

import contextlib
import random
from datetime import datetime, timedelta
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from scrapejobs_shared.observability.store_ops import count
from scrapejobs_shared.ports.host_gate import (
    PAUSE_AFTER,
    BreakerPolicy,
    HostLimits,
    HostSignals,
    HostState,
    PausedHost,
    Permit,
    Throttle,
    merge_paused,
)

RETENTION = timedelta(days=7)
PROBE_SLOTS = 1  # one random slot first: with warm slots a fresh take is rare, and a read
# of a document is the emulator's most expensive operation (measured: bench/README.md)
LOST_RACE = (gexc.FailedPrecondition, gexc.AlreadyExists, gexc.NotFound, gexc.Aborted)


class FirestoreHostGate:
    def __init__(self, client: firestore.AsyncClient) -> None:
        self._client = client
        self._hosts = client.collection("hosts")

    def _slot(self, host: str, slot: int) -> Any:
        return self._hosts.document(host).collection("slots").document(str(slot))

    async def acquire(
        self, host: str, limits: HostLimits, lease_until: datetime, now: datetime
    ) -> Permit | Throttle:
        host_ref = self._hosts.document(host)
        slots = list(range(limits.concurrency))
        random.shuffle(slots)
        # Usually a host has free slots: look at one random slot first, all only if it is busy.
        for batch in (slots[:PROBE_SLOTS], slots[PROBE_SLOTS:]):
            if not batch:
                continue
            refs = [host_ref] + [self._slot(host, n) for n in batch]
            count(reads=len(refs))
            snaps = {snap.reference.path: snap async for snap in self._client.get_all(refs)}
            host_snap = snaps[host_ref.path]
            signals = _signals(host_snap)
            if throttle := signals.throttle(now):
                return throttle
            for slot, ref in zip(batch, refs[1:], strict=True):
                if not _is_free(snaps[ref.path], now):
                    continue
                token = await self._take(snaps[ref.path], lease_until)
                if token is None:
                    continue
                permit = Permit(host, slot, token, signals.failures)
                if limits.min_interval_s and not await self._space(host_snap, limits, now):
                    await self.release(permit)
                    return Throttle(0.05, "rate")
                return permit
        return Throttle(0.2, "concurrency")

    async def _take(self, snap: Any, lease_until: datetime) -> Any:
        fields = {"lease_until": lease_until, "expire_at": lease_until + RETENTION}
        try:
            if snap.exists:
                option = self._client.write_option(last_update_time=snap.update_time)
                count(writes=1)
                result = await snap.reference.update(fields, option=option)
            else:
                count(writes=1)
                result = await snap.reference.create(fields)
        except LOST_RACE:
            return None
        return result.update_time

    async def _space(self, host_snap: Any, limits: HostLimits, now: datetime) -> bool:
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
                await host_snap.reference.update(fields, option=option)
            else:
                count(writes=1)
                await host_snap.reference.create(fields)
        except LOST_RACE:
            return False
        return True

    async def release(self, permit: Permit) -> None:
        option = self._client.write_option(last_update_time=permit.token)
        # A lost race means our lease lapsed and someone else holds the slot now.
        with contextlib.suppress(*LOST_RACE):
            count(writes=1)
            await self._slot(permit.host, permit.slot).update({"lease_until": None}, option=option)

    async def record_success(self, permit: Permit, now: datetime) -> None:
        if permit.failures:
            count(writes=1)
            await self._hosts.document(permit.host).set({"failures": 0}, merge=True)

    async def record_failure(self, host: str, policy: BreakerPolicy, now: datetime) -> None:
        """One blind increment, no transaction: the write's transform result is the new count.
        Several fetches of one host failing at once (a host going down, or a batch's lanes all
        timing out together) then never contend for the host document; the one whose
        increment reaches the threshold opens the breaker and starts the count again."""
        ref = self._hosts.document(host)
        commit = self._client.batch()
        commit.set(
            ref, {"failures": firestore.Increment(1), "expire_at": now + RETENTION}, merge=True
        )
        count(writes=1)
        [result] = await commit.commit()
        failures = int(result.transform_results[0].integer_value)
        if failures >= policy.failure_threshold:
            open_until = now + timedelta(seconds=policy.cooldown_s)
            count(writes=1)
            await ref.set({"failures": 0, "open_until": open_until}, merge=True)

    async def hold(self, host: str, until: datetime) -> None:
        ref = self._hosts.document(host)

        @firestore.async_transactional
        async def push_back(transaction: Any) -> None:
            count(reads=1, writes=1)
            snap = await ref.get(transaction=transaction)
            current = (snap.to_dict() or {}).get("next_at")
            if current is None or current < until:
                transaction.set(ref, {"next_at": until, "expire_at": until + RETENTION}, merge=True)

        await push_back(self._client.transaction())

    async def signals(self, host: str) -> HostSignals:
        count(reads=1)
        return _signals(await self._hosts.document(host).get())

    async def state(self, host: str, now: datetime) -> HostState:
        signals = await self.signals(host)
        slots = self._hosts.document(host).collection("slots")
        busy = await slots.where(filter=FieldFilter("lease_until", ">", now)).count().get()
        return HostState(
            host, signals.next_at, signals.open_until, signals.failures, int(busy[0][0].value)
        )

    async def paused(self, now: datetime, limit: int) -> list[PausedHost]:
        async def hosts_with(field: str, after: datetime, reason: str) -> list[PausedHost]:
            query = self._hosts.where(filter=FieldFilter(field, ">", after)).limit(limit)
            found = [PausedHost(s.id, s.get(field), reason) async for s in query.stream()]
            count(reads=max(len(found), 1))
            return found

        broken = await hosts_with("open_until", now, "circuit_open")
        held = await hosts_with("next_at", now + PAUSE_AFTER, "held")
        return merge_paused(broken + held, limit)


def _signals(host_snap: Any) -> HostSignals:
    doc = host_snap.to_dict() or {}
    return HostSignals(doc.get("next_at"), doc.get("open_until"), int(doc.get("failures") or 0))


def _is_free(snap: Any, now: datetime) -> bool:
    lease = (snap.to_dict() or {}).get("lease_until") if snap.exists else None
    return lease is None or lease <= now
