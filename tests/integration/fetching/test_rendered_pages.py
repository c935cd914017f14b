"""The renderer against real loopback servers and Debian's Chromium: script-built content,
the waits, every request the browser makes held to the safe fetcher's destination checks, a
page that never settles, and a browser that dies or is recycled."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace

import psutil
import pytest
from playwright.async_api import Error as PlaywrightError

from scrapejobs_shared.options.proxy_pools import ProxyChoice, parse_pool
from scrapejobs_shared.options.render import RenderOptions
from scrapejobs_shared.ports.fetcher import (
    BlockedDestination,
    FetchRequest,
    FetchRoute,
    RenderIncomplete,
    RenderTimeout,
    RenderUnavailable,
    TransientFetchError,
)
from scrapejobs_worker.fetching import FetchPolicy, SafeFetcher
from scrapejobs_worker.rendering.browser_process import BrowserPolicy, BrowserProcess
from scrapejobs_worker.rendering.chromium_renderer import ChromiumRenderer
from scrapejobs_worker.rendering.render_policy import RenderPolicy
from scrapejobs_worker.rendering.rendering_fetcher import RenderingFetcher
from scrapejobs_worker.rendering.request_routing import REQUESTS_PER_HOST
from support.browser import renderer_browser_path
from support.hostile_page import hostile_page

HTML = {"Content-Type": "text/html; charset=utf-8"}
ONLY_FIRST_LOOPBACK = FetchPolicy(allowlist=("127.0.0.1/32",))

SCRIPT_BUILT = b"""<!doctype html><html><body><ul id="items"></ul><script>
fetch('/api/items').then(r => r.json()).then(items => {
  for (const item of items) {
    const li = document.createElement('li'); li.className = 'name'; li.textContent = item;
    document.getElementById('items').appendChild(li);
  }
});
</script></body></html>"""


@pytest.fixture
async def renderer_factory(
    fetcher_factory: Callable[..., SafeFetcher],
) -> AsyncIterator[Callable[..., Awaitable[tuple[ChromiumRenderer, BrowserProcess]]]]:
    made: list[ChromiumRenderer] = []

    async def make(
        policy: FetchPolicy = ONLY_FIRST_LOOPBACK, **browser: int
    ) -> tuple[ChromiumRenderer, BrowserProcess]:
        browsers = BrowserProcess(BrowserPolicy(renderer_browser_path(), **browser))
        renderer = ChromiumRenderer(
            fetcher_factory(policy), browsers, RenderPolicy(policy.max_body_bytes)
        )
        made.append(renderer)
        return renderer, browsers

    yield make
    for renderer in made:
        await renderer.aclose()


def rendered(url: str, timeout_s: float = 10.0, **options: object) -> FetchRequest:
    return FetchRequest(url, {}, timeout_s, render=RenderOptions.model_validate(options))


async def test_script_built_content_is_in_the_rendered_dom_only(http_server, renderer_factory):
    http_server.serve("/", SCRIPT_BUILT, HTML)
    http_server.serve("/api/items", b'["alpha", "beta"]', {"Content-Type": "application/json"})
    renderer, _ = await renderer_factory()

    page = await renderer.fetch(rendered(http_server.url("/")))

    assert b'<li class="name">alpha</li><li class="name">beta</li>' in page.body
    assert page.rendered_ms is not None and page.rendered_ms >= 0
    assert page.status == 200 and page.content_type.startswith("text/html")
    plain = await RenderingFetcher(renderer._fetcher, None).fetch(
        FetchRequest(http_server.url("/"), {}, 5.0)
    )
    assert b"alpha" not in plain.body and plain.rendered_ms is None
    # the document was fetched once, by the fetcher, with a browser's user agent
    documents = [r for r in http_server.requests if r.path == "/"]
    assert len(documents) == 2  # this render's and the plain fetch's
    assert "Chrome/" in documents[0].headers["user-agent"]


async def test_a_rendered_page_s_requests_all_go_through_the_job_s_proxy(
    server_factory, renderer_factory, proxies
):
    """The page's script calls another origin (another port): that request reaches it through
    the job's proxy too (the proxy's log names both destinations, as addresses)."""
    page_server = await server_factory(("127.0.0.1",))
    api_server = await server_factory(("127.0.0.1",))
    api = api_server.url("/api/items")
    script = SCRIPT_BUILT.replace(b"'/api/items'", f"'{api}'".encode())
    page_server.serve("/", script, HTML)
    api_server.serve(
        "/api/items",
        b'["alpha", "beta"]',
        {"Content-Type": "application/json", "Access-Control-Allow-Origin": "*"},
    )
    proxy = proxies()
    pool = parse_pool(json.dumps([{"url": proxy.url("socks5"), "country": "DE"}]))
    renderer, _ = await renderer_factory(replace(ONLY_FIRST_LOOPBACK, proxies=pool))
    route = FetchRoute(proxy=ProxyChoice("basic", "DE"))
    request = replace(rendered(page_server.url("/")), route=route)

    page = await renderer.fetch(request)

    assert b'<li class="name">alpha</li><li class="name">beta</li>' in page.body
    destinations = {(host, port) for _, host, port in proxy.tunnels()}
    assert destinations == {("127.0.0.1", page_server.port), ("127.0.0.1", api_server.port)}


async def test_wait_for_waits_for_an_element_that_appears_late(http_server, renderer_factory):
    http_server.serve(
        "/",
        b"<html><body><script>setTimeout(() => {"
        b"const p = document.createElement('p'); p.id = 'late'; p.textContent = 'here';"
        b"document.body.appendChild(p);}, 1500);</script></body></html>",
        HTML,
    )
    renderer, _ = await renderer_factory()

    started = time.monotonic()
    page = await renderer.fetch(rendered(http_server.url("/"), wait_for="#late"))

    assert b'<p id="late">here</p>' in page.body
    assert time.monotonic() - started >= 1.4


async def test_wait_ms_waits_a_fixed_time(http_server, renderer_factory):
    http_server.serve(
        "/",
        b"<html><body><script>setTimeout(() => { document.body.dataset.done = 'yes'; }, 1200);"
        b"</script></body></html>",
        HTML,
    )
    renderer, _ = await renderer_factory()

    waited = await renderer.fetch(rendered(http_server.url("/"), wait_ms=2000))
    unwaited = await renderer.fetch(rendered(http_server.url("/")))

    assert b'data-done="yes"' in waited.body
    assert b'data-done="yes"' not in unwaited.body


@pytest.mark.parametrize("allowed", ["127.0.0.1/32", "127.0.0.0/8"])
async def test_no_request_of_a_hostile_page_reaches_a_refused_address(
    allowed, http_server, server_factory, renderer_factory
):
    """Images, an iframe, a stylesheet, a script, fetch, XHR, a beacon, a WebSocket, a popup
    and an iframe navigation all aim at 127.0.0.2. Refused by the fetcher's allowlist, that
    server sees no connection at all and the page still renders; allowed, the same page's
    requests do reach it (so the page does make them)."""
    other = await server_factory(hosts=("127.0.0.2",))
    other.serve("/", b"<html>other</html>", HTML)
    http_server.serve("/", hostile_page(other.url("/", host="127.0.0.2")), HTML)
    renderer, _ = await renderer_factory(FetchPolicy(allowlist=(allowed,)))

    page = await renderer.fetch(
        rendered(http_server.url("/"), wait_ms=500, block=[])  # nothing blocked by type
    )

    assert b'<p id="ok">still here</p>' in page.body
    assert b'<p id="built">built</p>' in page.body
    assert [r.path for r in http_server.requests] == ["/"]
    reached = {r.path for r in other.requests}
    if allowed == "127.0.0.1/32":
        assert other.connections == 0, reached
    else:  # everything but the socket (never routed) and the blocked-by-type nothing
        expected = {"/style.css", "/script.js", "/image.png", "/frame", "/fetch", "/xhr"}
        assert expected | {"/beacon", "/popup", "/frame2"} <= reached, reached
        assert "/socket" not in reached


async def test_whatever_escapes_routing_meets_a_proxy_that_refuses_it(http_server):
    """The browser's own connections go to the refusing proxy, loopback included."""
    http_server.serve("/", b"<html>here</html>", HTML)
    browsers = BrowserProcess(BrowserPolicy(renderer_browser_path()))
    try:
        async with browsers.context(wait_s=5) as context:  # no routes
            page = await context.new_page()
            with pytest.raises(PlaywrightError, match="ERR_PROXY_CONNECTION_FAILED"):
                await page.goto(http_server.url("/"))
    finally:
        await browsers.aclose()
    assert http_server.connections == 0


async def test_a_pages_webrtc_sends_no_udp(http_server, renderer_factory):
    """WebRTC's STUN binding requests are UDP from Chromium to an address the page chooses,
    outside every routing: the browser sends none (in the page, or an iframe of its own)."""
    stun = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    stun.bind(("127.0.0.1", 0))
    stun.setblocking(False)
    port = stun.getsockname()[1]
    script = f"""<script>
    async function ask(w) {{
      const pc = new w.RTCPeerConnection({{iceServers: [{{urls: 'stun:127.0.0.1:{port}'}}]}});
      pc.createDataChannel('x');
      await pc.setLocalDescription(await pc.createOffer());
    }}
    const frame = document.createElement('iframe');
    document.body.appendChild(frame);
    Promise.all([ask(window), ask(frame.contentWindow)]).then(() => {{
      document.body.insertAdjacentHTML('beforeend', '<p id=asked>asked</p>');
    }});
    </script>"""
    http_server.serve("/", f"<html><body>{script}</body></html>".encode(), HTML)
    renderer, _ = await renderer_factory()
    try:
        page = await renderer.fetch(rendered(http_server.url("/"), wait_for="#asked", wait_ms=2000))
        assert b"asked" in page.body  # the connections were made, and gathered
        with pytest.raises(BlockingIOError):
            stun.recv(2048)
    finally:
        stun.close()


async def test_a_pages_script_sends_a_bounded_number_of_requests_to_a_host(
    http_server, renderer_factory
):
    """The review: a page's script sent ~900 requests in 5 s to one host (no pace, no
    robots.txt). A rendered page sends at most REQUESTS_PER_HOST to any one host; the rest are
    not sent, and the page renders."""
    http_server.serve("/ping", b"ok", {"Content-Type": "text/plain"})
    script = """<script>
    Promise.allSettled([...Array(900).keys()].map(n => fetch('/ping?n=' + n))).then(() => {
      document.body.insertAdjacentHTML('beforeend', '<p id=done>done</p>');
    });
    </script>"""
    http_server.serve("/", f"<html><body>{script}</body></html>".encode(), HTML)
    renderer, _ = await renderer_factory()
    page = await renderer.fetch(rendered(http_server.url("/"), timeout_s=30, wait_for="#done"))
    assert b"done" in page.body
    pings = [r for r in http_server.requests if r.path.startswith("/ping")]
    assert len(pings) == REQUESTS_PER_HOST  # its document was answered from the first fetch


async def test_a_refused_top_level_url_is_blocked_with_no_request(server_factory, renderer_factory):
    other = await server_factory(hosts=("127.0.0.2",))
    other.serve("/", b"<html>other</html>", HTML)
    renderer, _ = await renderer_factory()

    with pytest.raises(BlockedDestination):
        await renderer.fetch(rendered(other.url("/", host="127.0.0.2")))
    assert other.connections == 0


async def test_a_navigation_to_a_refused_address_ends_the_render_blocked(
    http_server, server_factory, renderer_factory
):
    other = await server_factory(hosts=("127.0.0.2",))
    there = other.url("/", host="127.0.0.2")
    http_server.serve(
        "/", f'<html><body><script>location.href = "{there}";</script></body></html>'.encode(), HTML
    )
    renderer, _ = await renderer_factory()

    with pytest.raises(BlockedDestination):
        await renderer.fetch(rendered(http_server.url("/"), wait_ms=300))
    assert other.connections == 0


def serve_a_hanging_and_a_fine_page(server) -> None:
    """``/hang``: a script that never arrives (the page never loads); ``/fine``: a page."""

    async def never(_request, _writer) -> None:
        await asyncio.sleep(3600)

    server.routes["/never.js"] = never
    server.serve("/hang", b'<html><body><script src="/never.js"></script></body></html>', HTML)
    server.serve("/fine", b"<html><body><p>fine</p></body></html>", HTML)


async def test_a_page_that_never_settles_ends_render_timeout_and_the_next_renders(
    http_server, renderer_factory
):
    serve_a_hanging_and_a_fine_page(http_server)
    renderer, _ = await renderer_factory()

    started = time.monotonic()
    with pytest.raises(RenderTimeout):
        await renderer.fetch(rendered(http_server.url("/hang"), timeout_s=2.0))
    assert time.monotonic() - started < 4.0
    with pytest.raises(RenderTimeout, match="wait_for"):
        await renderer.fetch(rendered(http_server.url("/fine"), timeout_s=1.5, wait_for="#none"))

    page = await renderer.fetch(rendered(http_server.url("/fine")))
    assert b"<p>fine</p>" in page.body


async def test_a_killed_browser_fails_the_render_as_transient_and_a_new_one_serves(
    http_server, renderer_factory
):
    serve_a_hanging_and_a_fine_page(http_server)
    renderer, browsers = await renderer_factory()
    await renderer.fetch(rendered(http_server.url("/fine")))

    render = asyncio.create_task(renderer.fetch(rendered(http_server.url("/hang"))))
    await asyncio.sleep(1.0)
    for child in psutil.Process().children(recursive=True):
        if "chrom" in child.name():
            os.kill(child.pid, signal.SIGKILL)
    with pytest.raises(TransientFetchError):
        await render

    page = await renderer.fetch(rendered(http_server.url("/fine")))
    assert b"<p>fine</p>" in page.body
    assert browsers.launches == 2


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_a_page_whose_own_requests_failed_and_that_shows_nothing_is_rendered_again(
    http_server, renderer_factory
):
    gone = f"http://127.0.0.1:{closed_port()}/api/items"
    built_from = SCRIPT_BUILT.replace(b"'/api/items'", f"'{gone}'".encode())
    http_server.serve("/", built_from, HTML)
    http_server.serve(
        "/shown",
        b"<html><body><h1>Shown</h1><p>"
        + b"text " * 40
        + b"</p><img src='"
        + gone.encode()
        + b"'></body></html>",
        HTML,
    )
    renderer, _ = await renderer_factory()

    with pytest.raises(RenderIncomplete, match="1 of its requests failed") as failed:
        await renderer.fetch(rendered(http_server.url("/")))
    shown = await renderer.fetch(rendered(http_server.url("/shown")))

    assert failed.value.transient and not failed.value.host_fault
    assert gone in str(failed.value)
    assert b"<h1>Shown</h1>" in shown.body  # a failed image of a page that shows text: as ever


async def test_the_browser_is_recycled_after_its_pages(http_server, renderer_factory):
    http_server.serve("/", b"<html><body><p>page</p></body></html>", HTML)
    renderer, browsers = await renderer_factory(pages_per_browser=2)

    for _ in range(5):
        page = await renderer.fetch(rendered(http_server.url("/")))
        assert b"<p>page</p>" in page.body

    assert browsers.launches == 3


async def test_non_html_and_error_pages_are_answered_as_fetched(http_server, renderer_factory):
    http_server.serve("/data", b'{"a": 1}', {"Content-Type": "application/json"})
    http_server.serve("/gone", b"<html>gone</html>", HTML, status=404)
    renderer, _ = await renderer_factory()

    data = await renderer.fetch(rendered(http_server.url("/data")))
    gone = await renderer.fetch(rendered(http_server.url("/gone")))

    assert (data.body, data.rendered_ms) == (b'{"a": 1}', None)
    assert (gone.status, gone.rendered_ms) == (404, None)


async def test_a_worker_without_a_browser_refuses_rendered_requests(http_server, fetcher_factory):
    fetcher = RenderingFetcher(fetcher_factory(ONLY_FIRST_LOOPBACK), None)

    with pytest.raises(RenderUnavailable):
        await fetcher.fetch(rendered(http_server.url("/")))


async def test_the_page_byte_cap_holds_across_its_subresources(http_server, renderer_factory):
    """The document and what the page loads share one budget (the fetcher's byte cap): past
    it nothing more is fetched, and the page still renders."""
    http_server.serve(
        "/",
        b"<html><body><script>(async () => {"
        b"for (const n of [1, 2, 3]) { try { const r = await fetch('/big/' + n);"
        b"document.body.dataset['got' + n] = String((await r.text()).length); } catch (e) {"
        b"document.body.dataset['lost' + n] = 'yes'; } } document.body.dataset.done = 'yes';"
        b"})();</script></body></html>",
        HTML,
    )
    for n in (1, 2, 3):
        http_server.serve(f"/big/{n}", b"x" * 3000, {"Content-Type": "text/plain"})
    renderer, _ = await renderer_factory(
        FetchPolicy(allowlist=("127.0.0.1/32",), max_body_bytes=4096)
    )

    page = await renderer.fetch(rendered(http_server.url("/"), wait_for="body[data-done]"))

    assert b'data-got1="3000"' in page.body
    assert b'data-lost2="yes"' in page.body and b'data-lost3="yes"' in page.body
    assert "/big/3" not in [r.path for r in http_server.requests]  # never fetched


async def test_the_job_s_headers_go_with_every_request_of_the_page(http_server, renderer_factory):
    http_server.serve(
        "/",
        b"<html><body><script>fetch('/api').then(() => { document.body.dataset.done = 1; });"
        b"</script></body></html>",
        HTML,
    )
    http_server.serve("/api", b"{}", {"Content-Type": "application/json"})
    renderer, _ = await renderer_factory()

    await renderer.fetch(
        FetchRequest(
            http_server.url("/"),
            {"X-Team": "pricing"},
            10.0,
            render=RenderOptions(wait_for="body[data-done]"),
        )
    )

    by_path = {r.path: r.headers for r in http_server.requests}
    for path in ("/", "/api"):
        assert by_path[path]["x-team"] == "pricing"
        assert "Chrome/" in by_path[path]["user-agent"]
        assert "HeadlessChrome" not in by_path[path]["user-agent"]
    assert by_path["/api"]["referer"] == http_server.url("/")


async def test_the_job_s_headers_never_reach_another_origin_the_page_calls(
    http_server, server_factory, renderer_factory
):
    other = await server_factory()  # another port: another origin
    for path in ("/script.js", "/api", "/pixel.png", "/frame"):
        other.serve(path, b"", {"Access-Control-Allow-Origin": "*"})
    http_server.serve(
        "/",
        f"""<html><body><script src="{other.url("/script.js")}"></script>
        <img src="{other.url("/pixel.png")}"><iframe src="{other.url("/frame")}"></iframe>
        <script>
        Promise.all([fetch('/own'), fetch('{other.url("/api")}', {{method: 'POST', body: 'x'}})])
          .finally(() => {{ document.body.dataset.done = 1; }});
        </script></body></html>""".encode(),
        HTML,
    )
    http_server.serve("/own", b"{}", {"Content-Type": "application/json"})
    renderer, _ = await renderer_factory()
    secrets = {"Authorization": "Bearer job-secret", "X-Api-Key": "k-1", "Cookie": "s=1"}
    described = {"Accept-Language": "fr-FR"}

    await renderer.fetch(
        FetchRequest(
            http_server.url("/"),
            secrets | described,
            10.0,
            render=RenderOptions(wait_for="body[data-done]"),
        )
    )

    own = {r.path: r.headers for r in http_server.requests}
    for path in ("/", "/own"):
        assert own[path]["authorization"] == "Bearer job-secret" and own[path]["x-api-key"] == "k-1"
    # (images are not loaded by default)
    assert {r.path for r in other.requests} >= {"/script.js", "/frame", "/api"}
    for request in other.requests:
        assert not {"authorization", "x-api-key", "cookie"} & set(request.headers), request.path
        assert request.headers["accept-language"] == "fr-FR"
        assert "Chrome/" in request.headers["user-agent"]
