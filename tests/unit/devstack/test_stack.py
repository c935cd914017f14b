"""The local stack's configuration and process hygiene."""

from __future__ import annotations

import pytest

from scrapejobs_devstack import stack as stack_module
from scrapejobs_devstack.processes import free_port
from scrapejobs_devstack.stack import Stack, StackConfig


def test_ports_and_delivery_settings_come_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("DISPATCHER_PORT", "9090")
    monkeypatch.setenv("MIN_BACKOFF_S", "2")
    monkeypatch.setenv("MAX_BACKOFF_S", "7")
    monkeypatch.setenv("MAX_DELIVERY_ATTEMPTS", "9")
    config = StackConfig.from_env()
    assert config.dispatcher_url == "http://127.0.0.1:9090"
    topology = config.topology
    assert (topology.min_backoff_s, topology.max_backoff_s) == (2, 7)
    assert topology.max_delivery_attempts == 9


def test_a_service_that_never_gets_ready_is_stopped_not_leaked(monkeypatch, tmp_path) -> None:
    started = []
    real_start = stack_module.start_process

    def recording_start(*args, **kwargs):
        process = real_start(*args, **kwargs)
        started.append(process)
        return process

    def never_ready(*args, **kwargs):
        raise TimeoutError("not ready")

    monkeypatch.setattr(stack_module, "start_process", recording_start)
    monkeypatch.setattr(stack_module, "wait_http", never_ready)
    stack = Stack(StackConfig(log_dir=tmp_path))
    with pytest.raises(TimeoutError):
        stack._service("worker", "scrapejobs_worker", free_port(), {})
    [process] = started
    assert not process.alive()
