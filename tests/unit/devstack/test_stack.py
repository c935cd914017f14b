"""The local stack's configuration and process hygiene."""

from __future__ import annotations

import hashlib
import os

import pytest

from scrapejobs_devstack import stack as stack_module
from scrapejobs_devstack.emulators import jvm_env
from scrapejobs_devstack.processes import free_port
from scrapejobs_devstack.stack import Stack, StackConfig


def test_ports_and_delivery_settings_come_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("DISPATCHER_PORT", "9090")
    monkeypatch.setenv("MAX_DELIVERY_ATTEMPTS", "9")
    config = StackConfig.from_env()
    assert config.dispatcher_url == "http://127.0.0.1:9090"
    topology = config.topology
    assert (topology.min_backoff_s, topology.max_backoff_s) == (1, 1)  # the emulator's retry
    assert topology.max_delivery_attempts == 9


def _without_settings(monkeypatch) -> None:
    for name in [n for n in os.environ if n.startswith("SCRAPEJOBS_")]:
        monkeypatch.delenv(name)


def test_make_dev_signs_in_as_the_environment_says(monkeypatch) -> None:
    _without_settings(monkeypatch)
    assert StackConfig.from_env().dispatcher_env == {}  # the stack's default: none
    monkeypatch.setenv("SCRAPEJOBS_AUTH_MODE", "api_key")
    monkeypatch.setenv("SCRAPEJOBS_API_KEY_HASHES", "ab" * 32)
    config = StackConfig.from_env()
    assert config.scheduler_key is not None  # the local scheduler's own key, its digest passed
    assert config.dispatcher_env == {
        "SCRAPEJOBS_AUTH_MODE": "api_key",
        "SCRAPEJOBS_API_KEY_HASHES": "ab" * 32,
        "SCRAPEJOBS_SCHEDULER_KEY_HASHES": hashlib.sha256(
            config.scheduler_key.encode()
        ).hexdigest(),
    }


def test_make_dev_passes_every_ai_setting_to_both_services(monkeypatch) -> None:
    _without_settings(monkeypatch)
    assert StackConfig.from_env().worker_env == {}
    monkeypatch.setenv("SCRAPEJOBS_AI_PROVIDER", "openai")
    monkeypatch.setenv("SCRAPEJOBS_AI_BASE_URL", "http://127.0.0.1:8000/v1")
    monkeypatch.setenv("SCRAPEJOBS_AI_API_KEY", "sk-local")
    config = StackConfig.from_env()
    expected = {
        "SCRAPEJOBS_AI_PROVIDER": "openai",
        "SCRAPEJOBS_AI_BASE_URL": "http://127.0.0.1:8000/v1",
        "SCRAPEJOBS_AI_API_KEY": "sk-local",
    }
    assert config.worker_env == expected
    assert {k: v for k, v in config.dispatcher_env.items() if "_AI_" in k} == expected


def test_make_dev_hands_each_service_every_setting_it_reads_but_those_it_owns(
    monkeypatch,
) -> None:
    from scrapejobs_dispatcher.settings import DispatcherSettings
    from scrapejobs_worker.settings import WorkerSettings

    _without_settings(monkeypatch)
    for settings in (DispatcherSettings, WorkerSettings):
        for name in settings.model_fields:
            monkeypatch.setenv(f"SCRAPEJOBS_{name.upper()}", "from-the-caller")
    monkeypatch.setenv("SCRAPEJOBS_NOT_A_SETTING", "x")
    config = StackConfig.from_env()
    for given, settings in (
        (config.dispatcher_env, DispatcherSettings),
        (config.worker_env, WorkerSettings),
    ):
        read = {f"SCRAPEJOBS_{name.upper()}" for name in settings.model_fields}
        assert set(given) == read - stack_module.STACK_OWNED
    assert "SCRAPEJOBS_WEBHOOK_SECRETS" in config.worker_env  # the caller's key over make dev's
    assert "SCRAPEJOBS_FETCH_REFUSED_PORTS" not in config.worker_env  # the stack's own ports
    assert "SCRAPEJOBS_AUTH_MODE" not in config.worker_env  # the dispatcher's alone
    assert "SCRAPEJOBS_NOT_A_SETTING" not in config.dispatcher_env


def test_the_fetch_allowlist_comes_from_the_environment_when_set(monkeypatch) -> None:
    monkeypatch.delenv("SCRAPEJOBS_FETCH_ALLOWLIST", raising=False)
    assert stack_module.fetch_allowlist() == "127.0.0.0/8,::1/128"
    monkeypatch.setenv("SCRAPEJOBS_FETCH_ALLOWLIST", "127.0.0.1/32")
    assert stack_module.fetch_allowlist() == "127.0.0.1/32"


def test_the_renderer_runs_where_chromium_is_installed(monkeypatch) -> None:
    monkeypatch.setenv("RENDERER_PORT", "9191")
    config = StackConfig.from_env()
    assert config.render_browser == stack_module.system_chromium()
    if config.render_browser is not None:
        assert config.renderer_url == "http://127.0.0.1:9191"
    assert StackConfig(render_browser=None).renderer_url is None


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


def test_a_wrapped_service_runs_under_its_wrapper_and_waits_as_long_as_allowed(
    monkeypatch, tmp_path
) -> None:
    calls = {}
    real_start = stack_module.start_process

    def fake_start(name, argv, env, log_dir):
        calls["argv"] = list(argv)
        return real_start(name, ["sleep", "30"], {}, log_dir)

    def ready(url, process, timeout_s):
        calls["timeout_s"] = timeout_s

    monkeypatch.setattr(stack_module, "start_process", fake_start)
    monkeypatch.setattr(stack_module, "wait_http", ready)
    stack = Stack(StackConfig(log_dir=tmp_path))
    process = stack._service(
        "worker", "scrapejobs_worker", free_port(), {}, wrapper=("nice", "-n", "5"), ready_s=300
    )
    try:
        assert calls["argv"][:4] == ["nice", "-n", "5", stack_module.sys.executable]
        assert calls["timeout_s"] == 300
    finally:
        process.stop()


def test_a_process_is_signalled_once_however_often_it_is_stopped(monkeypatch, tmp_path) -> None:
    """After its group is gone, the group id may be another program's: a second stop (the
    bench stops a stack early, its cleanup stops it again) must not signal it."""
    from scrapejobs_devstack import processes

    process = processes.start_process("sleeper", ["sleep", "30"], {}, tmp_path)
    signalled = []
    real_stop_group = processes.stop_group

    def counting_stop_group(pgid, timeout_s=10.0):
        signalled.append(pgid)
        real_stop_group(pgid, timeout_s)

    monkeypatch.setattr(processes, "stop_group", counting_stop_group)
    process.stop()
    process.stop()
    assert signalled == [process.pid]
    assert not process.alive()


def test_the_emulators_jvms_start_with_the_first_tier_compiler_and_keep_the_users_flags() -> None:
    assert jvm_env({}) == {"JAVA_TOOL_OPTIONS": "-XX:TieredStopAtLevel=1"}
    # the environment's own flags come last: HotSpot takes the last of a repeated flag
    mine = jvm_env({"JAVA_TOOL_OPTIONS": "-Xmx2g -XX:TieredStopAtLevel=4"})
    assert mine == {"JAVA_TOOL_OPTIONS": "-XX:TieredStopAtLevel=1 -Xmx2g -XX:TieredStopAtLevel=4"}
