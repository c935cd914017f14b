"""free_port picks listening ports where outgoing connections never take their local port."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from scrapejobs_devstack import processes
from scrapejobs_devstack.processes import LOWEST_PORT, free_port


def _bind(port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", port))


def test_ports_come_from_below_the_ephemeral_range_and_are_free() -> None:
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    ports = {free_port() for _ in range(20)}
    assert all(LOWEST_PORT <= port < low for port in ports)
    assert len(ports) > 1
    for port in ports:
        _bind(port)  # nothing holds it


def test_a_port_some_listener_holds_is_never_picked(monkeypatch, tmp_path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        taken = held.getsockname()[1]
        monkeypatch.setattr(processes, "LOWEST_PORT", taken)
        range_file = tmp_path / "range"
        range_file.write_text(f"{taken + 1000}\t60999\n")
        monkeypatch.setattr(processes, "EPHEMERAL_RANGE_FILE", range_file)
        assert all(free_port() != taken for _ in range(200))


@pytest.mark.parametrize("content", ["1024\t65535\n", "garbage", ""])
def test_without_room_below_the_range_it_still_gives_a_free_port(
    monkeypatch, tmp_path, content
) -> None:
    range_file = tmp_path / "range"
    range_file.write_text(content)
    monkeypatch.setattr(processes, "EPHEMERAL_RANGE_FILE", range_file)
    _bind(free_port())
