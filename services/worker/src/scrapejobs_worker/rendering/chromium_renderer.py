"""The ``Fetcher`` of rendered pages: the document is fetched by the safe fetcher (as a plain
page, with a browser's user agent), and a 2xx HTML document is then loaded, from that fetch, in
a fresh browser context whose every request goes through the same fetcher
(``request_routing``). The body of the answer is the rendered DOM. With ``render: "auto"``
(``RenderOptions.when``) the document is rendered only when it shows nothing as served (an app
shell: ``extraction.page_shows_nothing``); any other page is answered as fetched, no browser
page taken.

Settled means: the ``load`` event, then ``wait_for`` matching (when given) or else the network
quiet for 500 ms, then ``wait_ms``. All of it, the document's fetch included, ends within the
request's ``timeout_s``; past it the task fails ``render_timeout``.

A request asking for a screenshot (``FetchRequest.screenshot``) is rendered whatever ``when``
says; the settled page is then captured, a PNG or a JPEG, its viewport or the whole page up to
``max_screenshot_px`` high, and answered in ``FetchResponse.browser`` (the worker keeps it in the
file store: page_files.py)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable
from typing import Any, Literal, TypeVar

from playwright.async_api import BrowserContext, FloatRect, Page
from playwright.async_api import Error as PlaywrightError

from scrapejobs_shared.domain.browser_result import SCREENSHOT, BrowserResult, PageFile
from scrapejobs_shared.domain.jobspec import RenderOptions
from scrapejobs_shared.extraction import page_shows_nothing
from scrapejobs_shared.extraction.formats import ScreenshotOptions
from scrapejobs_shared.ports.fetcher import (
    Fetcher,
    FetchRequest,
    FetchResponse,
    RenderTimeout,
)
from scrapejobs_worker.rendering.browser_process import BrowserCrashed, BrowserProcess
from scrapejobs_worker.rendering.request_routing import PageRouting, origin_of, refuse_socket

RENDERED_TYPE = "text/html; charset=utf-8"
MAX_SCREENSHOT_PX = 16_384  # the tallest full-page screenshot (Chromium's own texture limit)
# A page waits at most this share of its timeout (and never past it) for one of the process's
# browser pages; past it the task is deferred (render_busy), not failed.
SLOT_WAIT_SHARE = 0.5
T = TypeVar("T")


class ChromiumRenderer:
    def __init__(
        self,
        fetcher: Fetcher,
        browsers: BrowserProcess,
        max_page_bytes: int,
        max_screenshot_px: int = MAX_SCREENSHOT_PX,
    ) -> None:
        self._fetcher = fetcher
        self._browsers = browsers
        self._max_bytes = max_page_bytes
        self._max_screenshot_px = max_screenshot_px

    async def fetch(self, request: FetchRequest) -> FetchResponse:
        options = request.render or RenderOptions()
        deadline = time.monotonic() + request.timeout_s
        try:
            headers = {"user-agent": await self._browsers.user_agent(), **request.headers}
            # fetched like a plain page (a slow one is a fetch timeout, not render_timeout),
            # before a browser page is taken: an error status or a PDF needs none
            document = await self._fetcher.fetch(
                FetchRequest(request.url, headers, request.timeout_s, verify_tls=request.verify_tls)
            )
            unasked = options.when == "auto" and request.screenshot is None
            if not _renderable(document) or (unasked and not _shell(document)):
                return document
            left = max(0.0, deadline - time.monotonic())
            async with self._browsers.context(
                min(request.timeout_s * SLOT_WAIT_SHARE, left),
                viewport={"width": options.viewport.width, "height": options.viewport.height},
                service_workers="block",
                accept_downloads=False,
            ) as context:
                async with asyncio.timeout_at(_loop_time(deadline)):
                    return await self._render(
                        context, document, headers, options, deadline, request
                    )
        except TimeoutError:
            raise RenderTimeout(
                f"the page did not settle within {request.timeout_s:g} s"
                + (f" (wait_for {options.wait_for!r})" if options.wait_for else "")
            ) from None
        except PlaywrightError as exc:
            raise BrowserCrashed(f"browser: {exc.message}") from None

    async def _render(
        self,
        context: BrowserContext,
        document: FetchResponse,
        headers: dict[str, str],
        options: RenderOptions,
        deadline: float,
        request: FetchRequest,
    ) -> FetchResponse:
        blocked = frozenset(options.block)
        routing = PageRouting(
            self._fetcher,
            document,
            headers,
            blocked,
            self._max_bytes,
            deadline,
            request.verify_tls,
            origin=origin_of(request.url),  # the job's site: its headers go there only
        )
        await context.route("**/*", routing.handle)
        await context.route_web_socket("**/*", refuse_socket)
        rendering = time.monotonic()
        page = await context.new_page()
        routing.main_frame = page.main_frame
        html, final_url = await _unless_crashed(
            _settled_html(page, document.url, options, routing), page, context
        )
        browser = None
        if request.screenshot is not None:
            shot = await _unless_crashed(
                _screenshot(page, request.screenshot, self._max_screenshot_px), page, context
            )
            browser = BrowserResult(files=(shot,))
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
            tls_unverified=document.tls_unverified or routing.tls_unverified,
            browser=browser,
        )

    async def aclose(self) -> None:
        await self._browsers.aclose()


async def _settled_html(
    page: Page, url: str, options: RenderOptions, routing: PageRouting
) -> tuple[str, str]:
    """Load the page and wait until it settled; its DOM as HTML, and where it ended up."""
    try:
        await page.goto(url, wait_until="load", timeout=0)
        if options.wait_for is not None:
            await page.wait_for_selector(f"css={options.wait_for}", state="attached", timeout=0)
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
    return await page.content(), page.url


async def _screenshot(page: Page, options: ScreenshotOptions, max_px: int) -> PageFile:
    """The settled page as an image: its viewport, or the whole page up to ``max_px`` high."""
    kind: Literal["png", "jpeg"] = "png" if options.quality is None else "jpeg"
    clip: FloatRect | None = None
    if options.full_page:
        width, height = await page.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
        )
        clip = {"x": 0, "y": 0, "width": max(1, width), "height": max(1, min(height, max_px))}
    image = await page.screenshot(
        type=kind,
        quality=options.quality,
        full_page=options.full_page,
        clip=clip,
        animations="disabled",
        caret="hide",
        timeout=0,  # within the request's own deadline
    )
    return PageFile(f"{SCREENSHOT}.{kind}", f"image/{kind}", image)


async def _unless_crashed(work: Awaitable[T], page: Page, context: BrowserContext) -> T:
    """``work``, unless the page's renderer crashes or its browser dies first (a wait would
    then never end): that is ``BrowserCrashed``, which retries the task."""
    crashed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def crash(*_: object) -> None:
        if not crashed.done():
            crashed.set_result(None)

    browser = context.browser
    page.on("crash", crash)
    if browser is not None:
        browser.on("disconnected", crash)
    task = asyncio.ensure_future(work)
    try:
        either: list[asyncio.Future[Any]] = [task, crashed]
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            return task.result()
        raise BrowserCrashed("the browser crashed while rendering the page")
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        page.remove_listener("crash", crash)
        if browser is not None:
            browser.remove_listener("disconnected", crash)


def _renderable(document: FetchResponse) -> bool:
    """A 2xx HTML document; anything else is answered as fetched (an error status is the
    outcome policy's to judge, a PDF or JSON has nothing to render)."""
    if not 200 <= document.status < 300:
        return False
    content_type = document.content_type.lower()
    if content_type:
        return "html" in content_type
    return document.body.lstrip()[:1] == b"<"


def _shell(document: FetchResponse) -> bool:
    """A page that shows nothing as served, which ``render: "auto"`` renders (parsed apart
    from extraction: a page of an auto job is parsed twice when it is not rendered)."""
    return page_shows_nothing(document.body, document.content_type)


def _loop_time(deadline: float) -> float:
    """``deadline`` (time.monotonic) on the event loop's clock."""
    return asyncio.get_running_loop().time() + (deadline - time.monotonic())
