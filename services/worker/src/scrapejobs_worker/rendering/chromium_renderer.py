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

Once settled, the page's actions run in order (``RenderOptions.actions``: page_actions.py),
then the page is read. A request asking for a screenshot (``FetchRequest.screenshot``) or with
actions is rendered whatever ``when`` says; the page is then captured, a PNG or a JPEG, its
viewport or the whole page up to ``max_screenshot_px`` high. Files and answers go back in
``FetchResponse.browser`` (the worker keeps the files in the file store: kept_files.py)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

from playwright.async_api import BrowserContext, Page
from playwright.async_api import Error as PlaywrightError

from scrapejobs_shared.extraction import page_shows_nothing
from scrapejobs_shared.extraction.browser_result import SCREENSHOT, ActionAnswers, BrowserResult
from scrapejobs_shared.options.render import RenderOptions
from scrapejobs_shared.ports.fetcher import (
    Fetcher,
    FetchRequest,
    FetchResponse,
    RenderIncomplete,
    RenderTimeout,
)
from scrapejobs_worker.rendering.browser_process import BrowserCrashed, BrowserProcess
from scrapejobs_worker.rendering.page_actions import PageActions, capture, page_html
from scrapejobs_worker.rendering.render_policy import RenderPolicy
from scrapejobs_worker.rendering.request_routing import PageRouting, refuse_socket

RENDERED_TYPE = "text/html; charset=utf-8"
# A page waits at most this share of its timeout (and never past it) for one of the process's
# browser pages; past it the task is deferred (render_busy), not failed.
SLOT_WAIT_SHARE = 0.5
T = TypeVar("T")


class ChromiumRenderer:
    def __init__(self, fetcher: Fetcher, browsers: BrowserProcess, policy: RenderPolicy) -> None:
        self._fetcher = fetcher
        self._browsers = browsers
        self._policy = policy

    async def fetch(self, request: FetchRequest) -> FetchResponse:
        options = request.render or RenderOptions()
        deadline = time.monotonic() + request.timeout_s
        try:
            headers = {"user-agent": await self._browsers.user_agent(), **request.headers}
            # fetched like a plain page (a slow one is a fetch timeout, not render_timeout),
            # before a browser page is taken: an error status or a PDF needs none
            document = await self._fetcher.fetch(
                FetchRequest(request.url, headers, request.timeout_s, route=request.route)
            )
            shot = request.browser.screenshot if request.browser is not None else None
            unasked = options.when == "auto" and shot is None and not options.actions
            if not _renderable(document) or (unasked and not _shell(document)):
                return document
            left = max(0.0, deadline - time.monotonic())
            async with self._browsers.context(
                min(request.timeout_s * SLOT_WAIT_SHARE, left),
                viewport={"width": options.viewport.width, "height": options.viewport.height},
                service_workers="block",
                accept_downloads=False,
                **request.browser_context,
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
            self._policy.max_page_bytes,
            deadline,
            job=request,
        )
        await context.route("**/*", routing.handle)
        await context.route_web_socket("**/*", refuse_socket)
        rendering = time.monotonic()
        page = await context.new_page()
        routing.main_frame = page.main_frame
        page.on("requestfailed", routing.failed)
        actions = PageActions(page, deadline, self._policy)
        # one character past the page's bound: a longer page's HTML is cut in the page, and
        # the response says it was (truncated)
        settled = _settled_html(
            page, document.url, options, routing, actions, self._policy.max_page_bytes + 1
        )
        html, final_url, answers = await _unless_crashed(settled, page, context)
        _built(html, routing)
        browser = None
        if request.browser is not None and (shot := request.browser.screenshot) is not None:
            made = capture(
                page, SCREENSHOT, shot.full_page, shot.quality, self._policy.max_screenshot_px
            )
            actions.files.append(await _unless_crashed(made, page, context))
        if actions.files or answers is not None:
            browser = BrowserResult(files=tuple(actions.files), actions=answers)
        rendered_ms = round((time.monotonic() - rendering) * 1000)
        body = html.encode("utf-8")
        return FetchResponse(
            url=final_url if final_url.startswith(("http://", "https://")) else document.url,
            status=document.status,
            headers={"content-type": RENDERED_TYPE},
            body=body[: self._policy.max_page_bytes],
            elapsed_ms=document.elapsed_ms + rendered_ms,
            truncated=document.truncated or len(body) > self._policy.max_page_bytes,
            redirects=document.redirects,
            rendered_ms=rendered_ms,
            tls_unverified=document.tls_unverified or routing.tls_unverified,
            browser=browser,
        )

    async def aclose(self) -> None:
        await self._browsers.aclose()


async def _settled_html(
    page: Page,
    url: str,
    options: RenderOptions,
    routing: PageRouting,
    actions: PageActions,
    limit: int,
) -> tuple[str, str, ActionAnswers | None]:
    """Load the page, wait until it settled, run its actions; its DOM as HTML (at most
    ``limit`` characters), where it ended up, and what the actions answered (None: it had
    none)."""
    try:
        await page.goto(url, wait_until="load", timeout=0)
        if options.wait_for is not None:
            await page.wait_for_selector(f"css={options.wait_for}", state="attached", timeout=0)
        else:
            await page.wait_for_load_state("networkidle", timeout=0)
        if options.wait_ms:
            await asyncio.sleep(options.wait_ms / 1000)
        answers = await actions.run(options.actions) if options.actions else None
    except PlaywrightError:
        if routing.blocked is not None:
            raise routing.blocked from None
        raise
    if routing.blocked is not None:
        raise routing.blocked
    return await _content(page, routing, actions, limit), page.url, answers


async def _content(page: Page, routing: PageRouting, actions: PageActions, limit: int) -> str:
    """The page's DOM as HTML, at most ``limit`` characters; when an action started a
    navigation, once it ended (a navigation refused by the routing ends the render
    ``blocked_destination``)."""
    for _ in range(3):
        try:
            html, _ = await page_html(page, limit)
            return html
        except PlaywrightError as exc:
            if not _navigating(exc):
                raise
        with contextlib.suppress(PlaywrightError):
            await page.wait_for_load_state("load", timeout=actions.left_ms())
        if routing.blocked is not None:
            raise routing.blocked
    html, _ = await page_html(page, limit)
    return html


def _navigating(exc: PlaywrightError) -> bool:
    """Whether reading the page failed because it was navigating (Page.content() says so;
    an evaluation's context is destroyed)."""
    message = exc.message or ""
    return "navigating" in message or "context was destroyed" in message


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


def _built(html: str, routing: PageRouting) -> None:
    """Raise ``RenderIncomplete`` when the page shows nothing and some of its requests failed
    (parsed only then: a page none of whose requests failed is read once, by extraction)."""
    if routing.failures and page_shows_nothing(html.encode("utf-8"), RENDERED_TYPE):
        url, error = routing.failures[0]
        raise RenderIncomplete(
            f"the page shows nothing and {len(routing.failures)} of its requests failed"
            f" (first: {url}: {error})"
        )


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
