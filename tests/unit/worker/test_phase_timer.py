from __future__ import annotations

import asyncio
import json
import logging

from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.observability.phase_timer import collect_phases, phase
from support.worker_fakes import NOW, ScriptedFetcher, build_processor, push, setup_job


async def test_concurrent_collections_do_not_mix() -> None:
    async def work(name: str) -> dict[str, float]:
        with collect_phases() as timings:
            with phase(name):
                await asyncio.sleep(0.01)
            return timings

    first, second = await asyncio.gather(work("a"), work("b"))
    assert list(first) == ["a_ms"] and list(second) == ["b_ms"]
    with phase("outside"):  # no collection: a no-op
        pass


async def test_batch_processed_log_line_carries_phase_timings(caplog) -> None:
    store = MemoryJobStore()
    await setup_job(store)
    with caplog.at_level(logging.INFO, logger="scrapejobs_worker.lanes.batch_processor"):
        await build_processor(store, ScriptedFetcher(200), lambda: NOW).handle_push(push())
    [record] = [r for r in caplog.records if r.getMessage() == "batch processed"]
    fields = {k for k in vars(record) if k.endswith("_ms")}
    assert {
        "duration_ms",
        "spec_ms",
        "robots_ms",
        "admit_ms",
        "claim_ms",
        "fetch_ms",
        "release_ms",
        "extract_ms",
        "record_ms",
    } <= fields
    assert record.firestore_writes >= 0 and record.succeeded == 1  # type: ignore[attr-defined]
    json.dumps({k: getattr(record, k) for k in fields})
