"""The services run on uvloop under uvicorn, while the rest of the suite runs on asyncio's own
loop. The SSRF checks vet whatever ``loop.getaddrinfo`` returns, so both loops must resolve
every spelling the same way, the odd numeric ones included, with the same errors."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
import uvloop

from scrapejobs_worker.fetching.resolver import system_getaddrinfo

Runner = Callable[[Coroutine[Any, Any, Any]], Any]
LOOPS: dict[str, Runner] = {"asyncio": asyncio.run, "uvloop": uvloop.run}

LOOPBACK_SPELLINGS = [
    "127.0.0.1",
    "2130706433",
    "0x7f.0.0.1",
    "0x7f000001",
    "017700000001",
    "127.1",
    "localhost",
]
NOT_ADDRESSES = ["nonexistent.invalid", "1.2.3.4.5", "256.0.0.1"]


def _addresses(run: Runner, host: str) -> tuple[object, ...]:
    async def resolve() -> tuple[str, ...]:
        infos = await system_getaddrinfo(host, 80)
        return tuple(sorted({str(info[4][0]) for info in infos}))

    try:
        found: tuple[str, ...] = run(resolve())
        return found
    except socket.gaierror as exc:
        return ("gaierror", exc.errno)


def _each_loop(host: str) -> dict[str, Any]:
    return {name: _addresses(run, host) for name, run in LOOPS.items()}


@pytest.mark.parametrize("host", LOOPBACK_SPELLINGS)
def test_numeric_spellings_resolve_to_loopback_on_both_loops(host: str) -> None:
    assert _each_loop(host) == {"asyncio": ("127.0.0.1",), "uvloop": ("127.0.0.1",)}


@pytest.mark.parametrize("host", ["::1", "0:0:0:0:0:ffff:7f00:1"])
def test_ipv6_spellings_resolve_alike(host: str) -> None:
    found = _each_loop(host)
    assert found["asyncio"] == found["uvloop"]
    assert len(found["asyncio"]) == 1 and found["asyncio"][0] != "gaierror"


@pytest.mark.parametrize("host", NOT_ADDRESSES)
def test_names_without_an_address_fail_alike(host: str) -> None:
    found = _each_loop(host)
    assert found["asyncio"] == found["uvloop"]
    assert found["asyncio"][0] == "gaierror"
