"""Production defaults of the worker are the safe ones."""

from __future__ import annotations

import pytest

from scrapejobs_shared.adapters.memory.host_gate import MemoryHostGate
from scrapejobs_shared.domain.clock import utc_now
from scrapejobs_shared.politeness.warm_slot_gate import WarmSlotGate
from scrapejobs_shared.ports.fetcher import BlockedDestination, FetchRequest
from scrapejobs_worker.fetching import build_fetcher
from scrapejobs_worker.main import fetch_policy, warm_slots
from scrapejobs_worker.settings import WorkerSettings


def test_defaults_require_push_auth_and_allow_no_private_targets(monkeypatch) -> None:
    for name in ("SCRAPEJOBS_FETCH_ALLOWLIST", "SCRAPEJOBS_PUSH_AUTH"):
        monkeypatch.delenv(name, raising=False)
    settings = WorkerSettings()
    assert settings.fetch_allowlist == [] and settings.push_auth == "oidc"
    assert fetch_policy(settings).allowlist == ()


async def test_default_settings_block_loopback_without_connecting(monkeypatch) -> None:
    monkeypatch.delenv("SCRAPEJOBS_FETCH_ALLOWLIST", raising=False)
    fetcher = build_fetcher(fetch_policy(WorkerSettings()))
    try:
        for url in ("http://127.0.0.1:8080/", "http://[::1]/", "http://169.254.169.254/"):
            with pytest.raises(BlockedDestination):
                await fetcher.fetch(FetchRequest(url))
    finally:
        await fetcher.aclose()


def test_allowlist_is_read_from_a_comma_separated_variable(monkeypatch) -> None:
    monkeypatch.setenv("SCRAPEJOBS_FETCH_ALLOWLIST", "127.0.0.0/8, ::1/128")
    assert WorkerSettings().fetch_allowlist == ["127.0.0.0/8", "::1/128"]


def test_warm_slots_are_on_by_default_and_can_be_turned_off(monkeypatch) -> None:
    monkeypatch.delenv("SCRAPEJOBS_WARM_SLOT_IDLE_S", raising=False)
    gate = MemoryHostGate()
    assert isinstance(warm_slots(WorkerSettings(), gate, utc_now), WarmSlotGate)
    monkeypatch.setenv("SCRAPEJOBS_WARM_SLOT_IDLE_S", "0")
    assert warm_slots(WorkerSettings(), gate, utc_now) is gate
