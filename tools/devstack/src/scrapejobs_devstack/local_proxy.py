"""A real proxy on loopback, for the proxy tests and the bench's P workload: pproxy (PyPI)
serving HTTP CONNECT and SOCKS5 on one port, in a process of its own, which logs the
destination of every tunnel it opens (what the tests read: a destination is always an IP
literal, never a name).

pproxy 2.7.9 installs uvloop's policy and then asks for a loop uvloop has not made: the child
keeps uvloop out (it runs on asyncio's loop)."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from pathlib import Path

from scrapejobs_devstack.processes import free_port

LAUNCH = """
import asyncio, sys
sys.modules["uvloop"] = None
asyncio.set_event_loop(asyncio.new_event_loop())
from pproxy import server
sys.argv = ["pproxy", "-l", sys.argv[1], "-v"]
server.main()
"""
TUNNEL = re.compile(r"^(http|socks5) \S+ -> (\S+):(\d+)$")


class LocalProxy:
    """An HTTP and SOCKS5 proxy on 127.0.0.1, with credentials (pproxy's ``#user:password``)."""

    def __init__(self, log_dir: Path, user: str = "scraper", password: str = "s3cret-pw") -> None:
        self.port = free_port()
        self.user, self.password = user, password
        self.log = log_dir / f"pproxy-{self.port}.log"
        self._process: subprocess.Popen[bytes] | None = None

    def url(self, scheme: str = "http") -> str:
        return f"{scheme}://{self.user}:{self.password}@127.0.0.1:{self.port}"

    def start(self) -> LocalProxy:
        listen = f"http+socks5://127.0.0.1:{self.port}#{self.user}:{self.password}"
        with self.log.open("wb") as out:
            self._process = subprocess.Popen(
                [sys.executable, "-u", "-c", LAUNCH, listen], stdout=out, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return self
            if self._process.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"pproxy did not start: {self.log.read_text()}")

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()  # the process this object started, by its handle
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=5)
        self._process = None

    def tunnels(self) -> list[tuple[str, str, int]]:
        """Each tunnel the proxy opened: its protocol, destination host and port."""
        found = []
        for line in self.log.read_text(errors="replace").splitlines():
            if match := TUNNEL.match(line.strip()):
                found.append((match[1], match[2], int(match[3])))
        return found
