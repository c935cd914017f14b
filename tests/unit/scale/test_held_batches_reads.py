"""The limits model's reads for the reconcile's look for stalled chains: what the adapter's
query returns (held batches last written before the cutoff), and one read a chain."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from scrapejobs_scale.firestore_layout import HeldBatchesLayout
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from support.held_jobs import job_with_held_batches

NOW = datetime(2026, 12, 4, tzinfo=UTC)


async def test_a_look_reads_the_held_batches_past_the_cutoff_and_a_batch_a_chain() -> None:
    store = MemoryJobStore()
    reads = HeldBatchesLayout(store).reads()["stalled_holds"]
    assert reads((NOW, 200), {}) == 1  # nothing held: the query's one read
    job, batches = job_with_held_batches(NOW)
    await store.create_job(job, batches)
    held = sum(batch.held for batch in batches)
    assert held == 4  # one host's 6 batches, 2 of them in its window
    assert reads((NOW, 200), {}) == 1  # written at the cutoff, not before
    later = NOW + timedelta(seconds=1)
    assert reads((later, 200), {}) == held + 1  # one chain (the host's)
    assert reads((later, 3), {}) == 3 + 1  # the query's limit
