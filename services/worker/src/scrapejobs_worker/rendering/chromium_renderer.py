"""The ``Fetcher`` of rendered pages: the document is fetched by the safe fetcher (as a plain
page, with a browser's user agent), and a 2xx HTML document is then loaded in a fresh browser
context whose every request goes through the same fetcher (``request_routing``). The body of
the answer is the rendered DOM.

Settled means: the ``load`` event, then ``wait_for`` matching (when given) or else the network
quiet for 500 ms, then ``wait_ms``. All of it, the document's fetch included, ends within the
request's ``timeout_s``; past it the task fails ``render_timeout``."""

from __future__ import annotations

import asyncio
import time

from playwright.async_api import Error as PlaywrightError

from scrapejobs_shared.domain.jobspec import RenderOptions
from scrapejobs_worker.fetch_port import (
    Fetcher,
    FetchRequest,
    FetchResponse,
    RenderTimeout,
)
from scrapejobs_worker.rendering.browser_process import BrowserCrashed, BrowserProcess
from scrapejobs_worker.rendering.request_routing import PageRouting, refuse_socket

RENDERED_TYPE = "text/html; charset=utf-8"


class ChromiumRenderer:
    def __init__(self, fetcher: Fetcher, browsers: BrowserProcess, max_page_bytes: int) -> None:
        self._fetcher = fetcher
        self._browsers = browsers
        self._max_bytes = max_page_bytes

    async def fetch(self, request: FetchRequest) -> FetchResponse:
        options = request.render or RenderOptions()
        started = time.monotonic()
        deadline = started + request.timeout_s
        try:
            async with asyncio.timeout_at(_loop_time(deadline)):
                async with self._browsers.context(
                    viewport={"width": options.viewport.width, "height": options.viewport.height},
                    service_workers="block",
                    accept_downloads=False,
                ) as context:
                    headers = {"user-agent": self._browsers.user_agent, **request.headers}
                    document = await self._fetcher.fetch(
                        FetchRequest(request.url, headers, request.timeout_s)
                    )
                    if not _renderable(document):
                        return document
                    routing = PageRouting(
                        self._fetcher,
                        document,
                        headers,
                        frozenset(options.block),
                        self._max_bytes,
                        deadline,
                    )
                    await context.route("**/*", routing.handle)
                    await context.route_web_socket("**/*", refuse_socket)
                    rendering = time.monotonic()
                    page = await context.new_page()
                    routing.main_frame = page.main_frame
                    try:
                        await page.goto(document.url, wait_until="load", timeout=0)
                        if options.wait_for is not None:
                            selector = f"css={options.wait_for}"
                            await page.wait_for_selector(selector, state="attached", timeout=0)
                        else:
                            await page.wait_for_load_state("networkidle", timeout=0)
                        if options.wait_ms:
                            await asyncio.sleep(options.wait_ms / 1000)
                    except PlaywrightError:
                        if routing.blocked is not None:
                            raise routing.blocked from None
                        raise
                    if routing.blocked is not None:
                        raise routing.blocked
                    html = await page.content()
                    final_url = page.url
        except TimeoutError:
            raise RenderTimeout(
                f"the page did not settle within {request.timeout_s:g} s"
                + (f" (wait_for {options.wait_for!r})" if options.wait_for else "")
            ) from None
        except PlaywrightError as exc:
            raise BrowserCrashed(f"browser: {exc.message}") from None
        rendered_ms = round((time.monotonic() - rendering) * 1000)
        body = html.encode("utf-8")
        return FetchResponse(
            url=final_url if final_url.startswith(("http://", "https://")) else document.url,
            status=document.status,
            headers={"content-type": RENDERED_TYPE},
            body=body[: self._max_bytes],
            elapsed_ms=document.elapsed_ms + rendered_ms,
            truncated=document.truncated or len(body) > self._max_bytes,
            redirects=document.redirects,
            rendered_ms=rendered_ms,
        )

    async def aclose(self) -> None:
        await self._browsers.aclose()


def _renderable(document: FetchResponse) -> bool:
    """A 2xx HTML document; anything else is answered as fetched (an error status is the
    outcome policy's to judge, a PDF or JSON has nothing to render)."""
    if not 200 <= document.status < 300:
        return False
    content_type = document.content_type.lower()
    if content_type:
        return "html" in content_type
    return document.body.lstrip()[:1] == b"<"


def _loop_time(deadline: float) -> float:
    """``deadline`` (time.monotonic) on the event loop's clock."""
    return asyncio.get_running_loop().time() + (deadline - time.monotonic())
