"""Fixtures of the end-to-end tests: Firecrawl's own SDK pointed at the stack; for those that
render, the renderer (a worker with Chromium), a server on a refused address that counts what
reaches it, and the renderer with the fetch allowlist narrowed so that the refused server is
refused."""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator

import pytest
from firecrawl import Firecrawl

from scrapejobs_devstack.stack import Stack


@pytest.fixture(scope="module")
def firecrawl(stack: Stack) -> Iterator[Firecrawl]:
    yield Firecrawl(api_key="fc-local", api_url=stack.config.dispatcher_url)


@pytest.fixture
def renderer(stack):
    if stack.renderer is None:
        pytest.fail("no renderer in the stack: apt-get install chromium (.ci/run does)")
    return stack.renderer


@pytest.fixture
def refused_server() -> Iterator[tuple[str, list[int]]]:
    """A server on 127.0.0.2 that counts the connections it accepts (and answers none)."""
    accepted: list[int] = []

    class Counting(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            accepted.append(1)

    server = socketserver.ThreadingTCPServer(("127.0.0.2", 0), Counting)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.2:{server.server_address[1]}/", accepted
    server.shutdown()
    server.server_close()


@pytest.fixture
def narrowed_renderer(stack, renderer) -> Iterator[None]:
    """The renderer restarted with the fetch allowlist narrowed to 127.0.0.1/32 (as
    ``SCRAPEJOBS_FETCH_ALLOWLIST=127.0.0.1/32 make dev`` would start it), then restored."""
    saved = dict(stack.config.renderer_env)
    stack.config.renderer_env["SCRAPEJOBS_FETCH_ALLOWLIST"] = "127.0.0.1/32"
    renderer.kill()
    stack.start_renderer()
    try:
        yield
    finally:
        stack.renderer.kill()
        stack.config.renderer_env.clear()
        stack.config.renderer_env.update(saved)
        stack.start_renderer()
