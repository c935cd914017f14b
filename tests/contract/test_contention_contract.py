"""Contention fails the same way on the Firestore emulator and in make scale's limits model: a
transaction on a document another writer keeps busy is tried again in the adapter's rounds
and ends ``Contended`` (a 503 that names it), having changed nothing; once the document is
free, the same call goes through. On the emulator the busy writer is a transaction holding
the day document's lock; in the model, a writer that takes each of the document's tokens."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from typing import Any

import pytest
from google.api_core import exceptions as gexc
from google.cloud import firestore

from scrapejobs_scale.document_ledger import DocumentLedger
from scrapejobs_scale.limited_ports import LimitedPorts
from scrapejobs_scale.virtual_clock import VirtualClock, run_simulated
from scrapejobs_shared.adapters.firestore import store_base
from scrapejobs_shared.adapters.firestore.quota_ledger import FirestoreQuotaLedger
from scrapejobs_shared.ports.dependency_unavailable import Contended
from scrapejobs_shared.ports.quota_ledger import Reservation

DAY = date(2026, 12, 3)


async def outcome(call: Awaitable[Any]) -> str:
    try:
        await call
    except Contended:
        return "contended"
    return "done"


@pytest.mark.emulators
async def test_a_busy_day_document_on_the_emulator_ends_contended_then_frees(
    stack: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_base, "TRANSACTION_ROUNDS", 2)  # the rounds, shortened
    client = firestore.AsyncClient(project=stack.config.project_id)
    ledger = FirestoreQuotaLedger(client)
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    day_ref = client.collection("quota_days").document(f"{tenant}~{DAY.isoformat()}")
    await day_ref.set({"reserved": 0})
    release = asyncio.Event()
    holding = asyncio.Event()

    @firestore.async_transactional
    async def hold(transaction: Any) -> None:
        await day_ref.get(transaction=transaction)  # its lock, kept until the event
        holding.set()
        await release.wait()
        transaction.set(day_ref, {"reserved": 0})

    holder = asyncio.ensure_future(hold(client.transaction(max_attempts=1)))
    await holding.wait()
    refused = await outcome(ledger.reserve(tenant, DAY, [Reservation("job", 3)], 10))
    release.set()
    with contextlib.suppress(ValueError, gexc.Aborted):
        await holder
    assert refused == "contended"
    assert await ledger.reserved(tenant, DAY) == 0  # nothing of the refused call applied
    assert await ledger.reserve(tenant, DAY, [Reservation("job", 3)], 10) == [True]
    client.close()


def test_a_busy_day_document_in_the_model_ends_contended_then_frees() -> None:
    async def main(clock: VirtualClock) -> tuple[str, int, list[bool]]:
        ports = LimitedPorts(DocumentLedger(), clock)
        day_doc = f"quota_days/t1~{DAY.isoformat()}"
        hog = asyncio.ensure_future(hogging(ports.ledger, clock, day_doc))
        await asyncio.sleep(0.1)  # it has taken the burst
        refused = await outcome(ports.quota_ledger.reserve("t1", DAY, [Reservation("job", 3)], 10))
        reserved = await ports.quota_ledger.reserved("t1", DAY)
        hog.cancel()
        await asyncio.sleep(2.0)  # the document's tokens come back
        granted = await ports.quota_ledger.reserve("t1", DAY, [Reservation("job", 3)], 10)
        return refused, reserved, granted

    clock = VirtualClock()
    with ThreadPoolExecutor(1) as pool:
        refused, reserved, granted = pool.submit(run_simulated, main(clock), clock).result(60)
    assert refused == "contended" and reserved == 0 and granted == [True]


async def hogging(ledger: DocumentLedger, clock: VirtualClock, path: str) -> None:
    while True:
        with contextlib.suppress(gexc.Aborted):
            ledger.commit([path], clock.now_s)
        await asyncio.sleep(0.001)
