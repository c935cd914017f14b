"""What a page's actions answer is bounded before it reaches the worker (the review: a
script's return and a scrape's HTML came whole, 48 + 96 MiB from one page; a full-page
screenshot as wide as the page; a PDF of any length): past the actions' output
(SCRAPEJOBS_MAX_BODY_BYTES characters in all) the page fails at once, naming the action; a
full-page screenshot is cut at 3,840 pixels wide; a PDF at its first pages."""

from __future__ import annotations

import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pypdfium2
import pytest

from scrapejobs_shared.options.render import RenderOptions
from scrapejobs_shared.ports.fetcher import ActionFailed, FetchRequest, FetchResponse
from scrapejobs_worker.fetching import FetchPolicy, SafeFetcher
from scrapejobs_worker.rendering.browser_process import BrowserPolicy, BrowserProcess
from scrapejobs_worker.rendering.chromium_renderer import ChromiumRenderer
from scrapejobs_worker.rendering.render_policy import MAX_SCREENSHOT_WIDTH, RenderPolicy
from support.browser import renderer_browser_path

MIB = 1 << 20
HTML = {"Content-Type": "text/html; charset=utf-8"}
ONLY_FIRST_LOOPBACK = FetchPolicy(allowlist=("127.0.0.1/32",))
PAGE = b"<html><body><h1>Shop</h1><p>A page.</p></body></html>"


@pytest.fixture
async def render(
    fetcher_factory: Callable[..., SafeFetcher], http_server: Any
) -> AsyncIterator[Callable[..., Awaitable[FetchResponse]]]:
    """Render the test site's page with ``actions``, within ``policy``."""
    made: list[ChromiumRenderer] = []

    async def run(actions: list[dict[str, Any]], path: str = "/", **policy: int) -> FetchResponse:
        browsers = BrowserProcess(BrowserPolicy(renderer_browser_path()))
        limits = RenderPolicy(policy.pop("max_page_bytes", 10 * MIB), **policy)
        renderer = ChromiumRenderer(fetcher_factory(ONLY_FIRST_LOOPBACK), browsers, limits)
        made.append(renderer)
        options = RenderOptions.model_validate({"actions": actions})
        return await renderer.fetch(FetchRequest(http_server.url(path), {}, 30.0, render=options))

    yield run
    for renderer in made:
        await renderer.aclose()


async def test_a_script_returning_100_mib_fails_the_page_at_once(http_server, render) -> None:
    http_server.serve("/", PAGE, HTML)
    script = "return 'x'.repeat(100 * 1024 * 1024);"
    with pytest.raises(ActionFailed) as failed:
        await render([{"type": "execute_javascript", "script": script}])
    assert str(failed.value).startswith("action 1 (execute_javascript): its answer is larger than")
    assert "(SCRAPEJOBS_MAX_BODY_BYTES)" in str(failed.value)


async def test_scrapes_and_scripts_share_the_actions_output(http_server, render) -> None:
    http_server.serve("/", PAGE, HTML)
    grow = "document.body.append('y'.repeat(600 * 1024)); return 1;"
    actions = [
        {"type": "scrape"},
        {"type": "execute_javascript", "script": grow},
        {"type": "scrape"},
        {"type": "scrape"},
    ]
    with pytest.raises(ActionFailed) as failed:
        await render(actions, max_page_bytes=MIB)
    assert str(failed.value).startswith("action 4 (scrape): its answer is larger than")
    small = await render(actions[:2])
    assert small.browser is not None and small.browser.actions is not None
    [scraped] = small.browser.actions.scrapes
    assert "<h1>Shop</h1>" in scraped["html"]


async def test_a_full_page_screenshot_of_a_very_wide_page_is_cut(http_server, render) -> None:
    wide = b"<html><body style='margin:0'><div style='width:9000px;height:3000px'></div></body>"
    http_server.serve("/wide", wide, HTML)
    page = await render([{"type": "screenshot", "full_page": True}], path="/wide")
    assert page.browser is not None
    [shot] = page.browser.files
    width, height = struct.unpack(">II", shot.body[16:24])  # the PNG's IHDR
    assert width == MAX_SCREENSHOT_WIDTH and height == 3000


async def test_a_pdf_action_prints_its_first_pages_only(http_server, render) -> None:
    pages = "".join("<p style='page-break-after:always'>page</p>" for _ in range(40))
    http_server.serve("/long", f"<html><body>{pages}</body></html>".encode(), HTML)
    page = await render([{"type": "pdf"}], path="/long", max_pdf_pages=5)
    assert page.browser is not None
    [pdf] = page.browser.files
    assert len(pypdfium2.PdfDocument(pdf.body)) == 5
