"""Documents yield the CPU to pages (extraction/documents_yield.py): a real process, paused
while pages are extracted but for its share of each period, free once pages are quiet, and
never left paused."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from scrapejobs_worker.extraction import documents_yield
from scrapejobs_worker.extraction.documents_yield import DocumentsYield


def _state(pid: int) -> str:
    """The process's state letter (``T``: stopped)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


@pytest.fixture
def reader() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(["sleep", "60"])
    try:
        yield process
    finally:
        process.kill()
        process.wait(timeout=10)


async def _states(pid: int, seconds: float) -> list[str]:
    seen = []
    for _ in range(int(seconds / 0.01)):
        seen.append(_state(pid))
        await asyncio.sleep(0.01)
    return seen


async def test_a_document_is_paused_while_pages_flow_but_for_its_share(
    reader: subprocess.Popen[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(documents_yield, "PERIOD_S", 0.2)
    monkeypatch.setattr(documents_yield, "QUIET_S", 0.1)
    gate = DocumentsYield(lambda: [reader.pid])
    gate.start()
    try:
        assert "T" not in await _states(reader.pid, 0.1)  # no pages: it runs
        gate.page_started()
        flowing = await _states(reader.pid, 0.6)
        stopped = flowing.count("T") / len(flowing)
        assert 0.6 <= stopped <= 0.95, flowing  # paused 80% of each period, runs 20%
        gate.page_ended()
        await asyncio.sleep(0.35)  # quiet, and the period under way ends
        assert "T" not in await _states(reader.pid, 0.2)
        gate.page_started()
        await asyncio.sleep(0.05)
        assert _state(reader.pid) == "T"
    finally:
        await gate.close()
    assert _state(reader.pid) != "T"  # closed: never left paused


async def test_nothing_is_paused_when_no_document_is_being_read(
    reader: subprocess.Popen[bytes],
) -> None:
    gate = DocumentsYield(lambda: [])
    gate.start()
    gate.page_started()
    try:
        assert "T" not in await _states(reader.pid, 0.3)
    finally:
        await gate.close()
