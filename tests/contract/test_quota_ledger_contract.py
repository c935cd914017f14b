"""The QuotaLedger contract on the memory twin and the Firestore emulator: reservations within
the limit in order, one submission retried counted once, releases cumulative and bounded, and
parallel reservations from several clients never passing the limit."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import date

import pytest
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.quota_ledger import FirestoreQuotaLedger
from scrapejobs_shared.adapters.memory.quota_ledger import MemoryQuotaLedger
from scrapejobs_shared.ports.quota_ledger import QuotaLedger, Reservation

DAY = date(2026, 11, 28)


@pytest.fixture(params=["memory", pytest.param("firestore", marks=pytest.mark.emulators)])
async def ledgers(request: pytest.FixtureRequest) -> AsyncIterator[list[QuotaLedger]]:
    """Three ledgers over one store (three instances)."""
    if request.param == "memory":
        shared = MemoryQuotaLedger()
        yield [shared, shared, shared]
        return
    stack = request.getfixturevalue("stack")
    clients = [firestore.AsyncClient(project=stack.config.project_id) for _ in range(3)]
    yield [FirestoreQuotaLedger(client) for client in clients]
    for client in clients:
        client.close()


def tenant() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


async def test_reservations_are_granted_in_order_within_the_limit(
    ledgers: list[QuotaLedger],
) -> None:
    ledger, who = ledgers[0], tenant()
    wanted = [Reservation("a", 4), Reservation("b", 7), Reservation("c", 6)]
    assert await ledger.reserve(who, DAY, wanted, 10) == [True, False, True]
    assert await ledger.reserved(who, DAY) == 10
    # a submission retried: granted again, not counted again
    assert await ledger.reserve(who, DAY, [Reservation("a", 4)], 10) == [True]
    assert await ledger.reserve(who, DAY, [Reservation("d", 1)], 10) == [False]
    assert await ledger.reserved(who, DAY) == 10
    assert await ledger.reserved(tenant(), DAY) == 0  # another tenant's day


async def test_releases_are_cumulative_and_bounded(ledgers: list[QuotaLedger]) -> None:
    ledger, who = ledgers[0], tenant()
    await ledger.reserve(who, DAY, [Reservation("job", 8)], 10)
    await ledger.release(who, DAY, "job", 3)  # a cancel: 3 unused so far
    assert await ledger.reserved(who, DAY) == 5
    await ledger.release(who, DAY, "job", 3)  # told again: nothing more
    await ledger.release(who, DAY, "job", 2)  # less than before: nothing
    assert await ledger.reserved(who, DAY) == 5
    await ledger.release(who, DAY, "job", 50)  # its end: at most what it held
    assert await ledger.reserved(who, DAY) == 0
    await ledger.release(who, DAY, "never-reserved", 5)
    assert await ledger.reserved(who, DAY) == 0
    assert await ledger.reserve(who, DAY, [Reservation("next", 10)], 10) == [True]


async def test_parallel_reservations_never_pass_the_limit(ledgers: list[QuotaLedger]) -> None:
    who = tenant()
    calls = [ledgers[n % 3].reserve(who, DAY, [Reservation(f"job-{n}", 3)], 10) for n in range(12)]
    granted = [g for result in await asyncio.gather(*calls) for g in result]
    assert sum(granted) == 3  # 3 x 3 pages: a fourth would pass 10
    assert await ledgers[1].reserved(who, DAY) == 9


async def test_reservations_are_unsettled_until_a_final_release(
    ledgers: list[QuotaLedger],
) -> None:
    ledger, who = ledgers[0], tenant()
    await ledger.reserve(who, DAY, [Reservation("a", 5), Reservation("b", 3)], 10)
    assert sorted(await ledger.unsettled(who, DAY, 10)) == ["a", "b"]
    await ledger.release(who, DAY, "a", 1)  # a cancel: not its end
    assert sorted(await ledger.unsettled(who, DAY, 10)) == ["a", "b"]
    await ledger.release(who, DAY, "a", 2, final=True)  # its end: 2 unused in all
    await ledger.release(who, DAY, "b", 0, final=True)  # used all it held
    assert await ledger.unsettled(who, DAY, 10) == []
    assert await ledger.reserved(who, DAY) == 6
    assert len(await ledger.unsettled(tenant(), DAY, 10)) == 0


async def test_a_key_reused_after_a_cancel_or_for_more_pages_is_counted_anew(
    ledgers: list[QuotaLedger],
) -> None:
    """The review's bypass: a 1-page job under a chosen id, cancelled (its page given back)
    and deleted, then 5,000 pages under the same id were granted as the same reservation."""
    ledger, who = ledgers[0], tenant()
    assert await ledger.reserve(who, DAY, [Reservation("chosen", 1)], 10) == [True]
    await ledger.release(who, DAY, "chosen", 1, final=True)  # cancelled: nothing used
    assert await ledger.reserve(who, DAY, [Reservation("chosen", 5000)], 10) == [False]
    assert await ledger.reserve(who, DAY, [Reservation("chosen", 4)], 10) == [True]
    assert await ledger.reserved(who, DAY) == 4
    assert await ledger.unsettled(who, DAY, 10) == ["chosen"]  # the new one, not settled
    # more pages under a held key: counted anew, the first one's pages staying counted
    assert await ledger.reserve(who, DAY, [Reservation("chosen", 6)], 10) == [True]
    assert await ledger.reserved(who, DAY) == 10
    assert await ledger.reserve(who, DAY, [Reservation("chosen", 6)], 10) == [True]  # retried
    assert await ledger.reserved(who, DAY) == 10
