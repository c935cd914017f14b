"""The keys the API accepts: the bootstrap digests of the settings (administrators, as before
tenants) and the keys kept in the store, created and revoked at run time.

A presented key is looked up by its SHA-256 digest (one document read) and what the store said
is kept for :data:`RECHECK_S`: a revoked key is refused on every instance within that long, and
a busy caller costs the store one read per instance every few seconds, not one per request.

A made-up key of the right shape (its checksum is no secret) would cost a read each: an
instance reads at most :data:`FIRST_READS_PER_S` keys a second that it has never seen valid
(:data:`FIRST_READS_BURST` at once); past it such a key is answered ``503`` without a read
(:class:`KeyLookupsBusy`), while every key it has seen valid goes on as before. A key
presented again after the store said it has none is refused without a read (:class:`_Digests`).
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import timedelta
from typing import Generic, TypeVar

from scrapejobs_dispatcher.tenants.api_keys import (
    MAX_PRESENTED_KEY_LENGTH,
    ApiKeyVerifier,
    generate_api_key,
    plausible_key,
)
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.tenancy import DEFAULT_TENANT, Caller, Role
from scrapejobs_shared.errors import Unavailable
from scrapejobs_shared.ports.api_keys import ApiKeyRecord, ApiKeyStore

log = logging.getLogger(__name__)
RECHECK_S = 5.0  # how long a key's record (or its absence) is trusted by one instance
USED_EVERY = timedelta(hours=1)  # last_used_at is written at most this often per key
CACHED_KEYS = 10_000
ABSENT_KEPT = 10_000  # well-formed keys the store did not have, remembered (oldest go first)
FIRST_READS_PER_S = 50.0  # reads of keys an instance never saw valid, a second
FIRST_READS_BURST = 100
BOOTSTRAP_PREFIX = "bootstrap-"
SCHEDULER_PREFIX = "scheduler-"
K = TypeVar("K")


@dataclass(frozen=True, slots=True)
class KnownKey:
    """A key the API accepts: who it makes the caller, and the digest that signs its sessions."""

    caller: Caller
    digest: bytes


@dataclass(frozen=True, slots=True)
class NewKey:
    key: str  # shown once, never stored
    record: ApiKeyRecord


class Keyring:
    def __init__(
        self,
        bootstrap: ApiKeyVerifier,
        clock: Clock,
        recheck_s: float = RECHECK_S,
        schedulers: ApiKeyVerifier | None = None,
    ):
        """``bootstrap``: the settings' administrator keys; ``schedulers``: the settings' keys
        of the scheduler role (a local scheduler's)."""
        self._bootstrap = bootstrap
        self._schedulers = schedulers or ApiKeyVerifier(())
        self._clock = clock
        self._store: ApiKeyStore | None = None
        self._cache: _Recent[bytes] = _Recent(recheck_s)
        self._absent = _Digests(ABSENT_KEPT)
        self._valid = _Digests(CACHED_KEYS)  # digests the store said are keys
        self._first_reads = _Bucket(FIRST_READS_PER_S, FIRST_READS_BURST)
        self._by_id: _Recent[str] = _Recent(recheck_s)

    def use_store(self, store: ApiKeyStore) -> None:
        """The store of run-time keys (the composition root attaches it at start-up)."""
        self._store = store

    @property
    def enabled(self) -> bool:
        """Whether any key can be accepted (bootstrap digests, or a store of keys)."""
        return bool(self._bootstrap.digests) or self._store is not None

    async def known(self, presented: str | None) -> KnownKey | None:
        """The key ``presented`` is, or None for one the API does not accept."""
        if not presented or len(presented) > MAX_PRESENTED_KEY_LENGTH:
            return None
        matched = self._bootstrap.match(presented)
        if matched is not None:
            return _bootstrap_key(matched)
        scheduler = self._schedulers.match(presented)
        if scheduler is not None:
            caller = Caller(DEFAULT_TENANT, Role.SCHEDULER, SCHEDULER_PREFIX + scheduler.hex()[:12])
            return KnownKey(caller, scheduler)
        if not plausible_key(presented):  # made up or mistyped: no store read
            return None
        try:
            digest = hashlib.sha256(presented.encode("utf-8")).digest()
        except UnicodeEncodeError:
            return None
        record = await self._record(digest)
        return None if record is None else KnownKey(_caller(record), digest)

    async def by_id(self, key_id: str) -> KnownKey | None:
        """The key with this id (a dashboard session names the key that signed it in)."""
        for digest in self._bootstrap.digests:
            if _bootstrap_id(digest) == key_id:
                return _bootstrap_key(digest)
        if self._store is None or not key_id.startswith("key_"):
            return None
        known, record = self._by_id.get(key_id)
        if not known:
            record = await self._store.by_id(key_id)
            self._by_id.put(key_id, record)
        return None if record is None else KnownKey(_caller(record), bytes.fromhex(record.digest))

    async def create(self, tenant: str, role: Role, name: str) -> NewKey:
        store = self._require_store()
        key, digest = generate_api_key()
        record = ApiKeyRecord(
            id=f"key_{secrets.token_hex(8)}",
            digest=digest,
            tenant=tenant,
            role=role,
            name=name,
            created_at=self._clock(),
        )
        await store.add(record)
        log.info("api key created", extra={"key_id": record.id, "tenant": tenant, "role": role})
        return NewKey(key, record)

    async def listed(self, tenant: str | None, limit: int) -> list[ApiKeyRecord]:
        return list(await self._require_store().listed(tenant, limit))

    async def revoke(self, key_id: str) -> bool:
        removed = await self._require_store().remove(key_id)
        if removed:  # this instance refuses it at once; the others within recheck_s
            self._by_id.forget(key_id)
            self._cache.forget_key(key_id)
            log.info("api key revoked", extra={"key_id": key_id})
        return removed

    async def _record(self, digest: bytes) -> ApiKeyRecord | None:
        if self._store is None:
            return None
        known, record = self._cache.get(digest)
        if known:
            return record
        if digest in self._absent:  # a key the store did not have: keys are never reissued
            return None
        if digest not in self._valid and not self._first_reads.take():
            raise KeyLookupsBusy(
                "too many keys this instance has not seen are being presented; try again "
                "in a second"
            )
        record = await self._store.by_digest(digest.hex())
        if record is None:
            self._absent.add(digest)
            return None
        self._valid.add(digest)
        self._cache.put(digest, record)
        if record is not None:
            now = self._clock()
            if record.last_used_at is None or record.last_used_at + USED_EVERY <= now:
                try:
                    await self._store.used(record.digest, now)
                except Exception:  # only a figure is at stake: the call goes on
                    log.exception("noting a key's use failed", extra={"key_id": record.id})
        return record

    def _require_store(self) -> ApiKeyStore:
        if self._store is None:
            raise RuntimeError("no key store attached")
        return self._store


class _Recent(Generic[K]):
    """What the store said of a key (or that it has none), trusted for ``ttl_s``."""

    def __init__(self, ttl_s: float) -> None:
        self._ttl_s = ttl_s
        self._seen: dict[K, tuple[ApiKeyRecord | None, float]] = {}

    def get(self, key: K) -> tuple[bool, ApiKeyRecord | None]:
        """(known, record): known is False when it must be read again."""
        seen = self._seen.get(key)
        if seen is None or seen[1] <= time.monotonic():
            return False, None
        return True, seen[0]

    def put(self, key: K, record: ApiKeyRecord | None) -> None:
        if len(self._seen) >= CACHED_KEYS:
            self._seen.clear()
        self._seen[key] = (record, time.monotonic() + self._ttl_s)

    def forget(self, key: K) -> None:
        self._seen.pop(key, None)

    def forget_key(self, key_id: str) -> None:
        self._seen = {
            k: seen for k, seen in self._seen.items() if seen[0] is None or seen[0].id != key_id
        }


class KeyLookupsBusy(Unavailable):
    """Keys never seen valid here are presented faster than this instance reads them."""


class _Bucket:
    """``rate`` a second, ``burst`` at once (a token bucket)."""

    def __init__(self, rate: float, burst: int) -> None:
        self._rate, self._burst = rate, float(burst)
        self._tokens, self._at = float(burst), time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self._tokens = min(self._burst, self._tokens + (now - self._at) * self._rate)
        self._at = now
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True


class _Digests:
    """The most recent ``size`` digests of keys the store did not have (``_absent``: a random
    key is never made twice, so one presented again is refused without a read; a flood of new
    ones pushes out the oldest, never the keys known to exist) or did have (``_valid``)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._seen: OrderedDict[bytes, None] = OrderedDict()

    def __contains__(self, digest: bytes) -> bool:
        return digest in self._seen

    def add(self, digest: bytes) -> None:
        self._seen[digest] = None
        while len(self._seen) > self._size:
            self._seen.popitem(last=False)


def _caller(record: ApiKeyRecord) -> Caller:
    return Caller(record.tenant, record.role, record.id)


def _bootstrap_id(digest: bytes) -> str:
    return BOOTSTRAP_PREFIX + digest.hex()[:12]


def _bootstrap_key(digest: bytes) -> KnownKey:
    return KnownKey(Caller(DEFAULT_TENANT, Role.ADMIN, _bootstrap_id(digest)), digest)
