"""Child processes we start ourselves, each in its own process group, stopped by pid."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx

EPHEMERAL_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST_PORT = 20000  # free ports are picked from here up to the ephemeral range


def free_port() -> int:
    """A loopback TCP port nothing is bound to, below the kernel's ephemeral range when it can.

    Binding port 0 gives a port from the ephemeral range, which every outgoing connection
    also draws its local port from: between this call and the service binding the port, a
    connection (the emulators', the tests') could take it, and the service would fail with
    "Address already in use". Below that range only listeners bind, and this checks that none
    has."""
    low = _ephemeral_low()
    for _ in range(200):
        if low - LOWEST_PORT < 1000:
            break
        port = random.randrange(LOWEST_PORT, low)
        if _bindable(port):
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        chosen: int = sock.getsockname()[1]
        return chosen


def _ephemeral_low() -> int:
    try:
        return int(EPHEMERAL_RANGE_FILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


@dataclass
class ManagedProcess:
    name: str
    popen: subprocess.Popen[bytes]
    log_path: Path
    stopped: bool = field(default=False, init=False)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, timeout_s: float = 10.0) -> None:
        """SIGTERM the whole group (gcloud starts a Java child), SIGKILL if it lingers. Once:
        after the group is gone, its id may be another process group's."""
        if self.stopped:
            return
        stop_group(self.pid, timeout_s)
        self.stopped = True
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=1)

    def kill(self) -> None:
        """SIGKILL the group at once (crash simulation)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGKILL)
        self.popen.wait(timeout=10)


def stop_group(pgid: int, timeout_s: float = 10.0) -> None:
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not _group_alive(pgid):
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(ChildProcessError):
        os.waitpid(-pgid, os.WNOHANG)
    return True


def start_process(
    name: str, argv: Sequence[str], env: Mapping[str, str], log_dir: Path
) -> ManagedProcess:
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"{name}.log"
    with log_path.open("ab") as log_file:
        popen = subprocess.Popen(
            list(argv),
            env={**os.environ, **env},
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    return ManagedProcess(name, popen, log_path)


def wait_http(
    url: str, process: ManagedProcess, timeout_s: float = 90.0, expect: str | None = None
) -> None:
    """Poll ``url`` until it answers 200 (and contains ``expect``), or fail with the log tail."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not process.alive():
            raise RuntimeError(f"{process.name} exited early:\n{tail(process.log_path)}")
        with contextlib.suppress(httpx.HTTPError):
            response = httpx.get(url, timeout=2.0)
            if response.status_code == 200 and (expect is None or expect in response.text):
                return
        time.sleep(0.2)
    raise TimeoutError(f"{process.name} not ready at {url}:\n{tail(process.log_path)}")


def tail(path: Path, lines: int = 30) -> str:
    with contextlib.suppress(OSError):
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    return ""
