"""A page's browser actions run in order once it settled (options/render/actions.py), and the
captures the renderer takes (the screenshot format's, an action's screenshot or PDF). Every
request the page makes meanwhile (a click's navigation, a script's fetch) goes through the
page's routing, checked as the page's own; the whole runs within the request's deadline.

An action that cannot be done fails the page (``ActionFailed``: which action, and why): a
selector that matches nothing within the time left, a key the browser does not know, a script
that throws or runs past ``script_timeout_s``.

**Bounded output.** What the actions answer is measured in the page before it crosses to the
worker: scrapes' HTML and scripts' values (as JSON) hold at most the page's own bound in all
(``SCRAPEJOBS_MAX_BODY_BYTES`` characters); an action past what is left fails the page at once
(permanent: the same page answers the same again), and what crossed is measured again (a page's
own scripts can replace what measures it). A full-page screenshot is at most
``MAX_SCREENSHOT_WIDTH`` wide, ``max_screenshot_px`` high and ``MAX_SCREENSHOT_PIXELS`` in
area (a 9,000-pixel-wide page took Chromium 1.1 GiB more); a PDF its first ``max_pdf_pages``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from typing import Any, Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import FloatRect, Page

from scrapejobs_shared.extraction.browser_result import ActionAnswers, PageFile
from scrapejobs_shared.options.render.actions import (
    Action,
    Click,
    ExecuteJavascript,
    Pdf,
    Press,
    Scrape,
    Screenshot,
    Scroll,
    Wait,
    Write,
)
from scrapejobs_shared.ports.fetcher import ActionFailed
from scrapejobs_worker.rendering.render_policy import (
    MAX_SCREENSHOT_PIXELS,
    MAX_SCREENSHOT_WIDTH,
    RenderPolicy,
)

MARGIN_S = 0.5  # left of the deadline for reading the page once the actions are done


async def capture(
    page: Page, name: str, full_page: bool, quality: int | None, max_px: int
) -> PageFile:
    """The page as an image: its viewport, or the whole page up to ``max_px`` high."""
    kind: Literal["png", "jpeg"] = "png" if quality is None else "jpeg"
    clip: FloatRect | None = None
    if full_page:
        width, height = await page.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
        )
        width = max(1, min(int(width), MAX_SCREENSHOT_WIDTH))
        height = max(1, min(int(height), max_px, MAX_SCREENSHOT_PIXELS // width))
        clip = {"x": 0, "y": 0, "width": width, "height": height}
    image = await page.screenshot(
        type=kind,
        quality=quality,
        full_page=full_page,
        clip=clip,
        animations="disabled",
        caret="hide",
        timeout=0,  # within the request's own deadline
    )
    return PageFile(f"{name}.{kind}", f"image/{kind}", image)


class PageActions:
    def __init__(self, page: Page, deadline: float, policy: RenderPolicy) -> None:
        """``deadline``: time.monotonic() by which the actions must be done."""
        self._page = page
        self._deadline = deadline
        self._script_timeout_s = policy.script_timeout_s
        self._max_px = policy.max_screenshot_px
        self._max_pdf_pages = policy.max_pdf_pages
        self._output_left = policy.max_page_bytes  # characters the actions may still answer
        self.files: list[PageFile] = []
        self._shots: list[str] = []
        self._scrapes: list[dict[str, str]] = []
        self._returns: list[dict[str, Any]] = []
        self._pdfs: list[str] = []

    async def run(self, actions: Sequence[Action]) -> ActionAnswers:
        for number, action in enumerate(actions, 1):
            try:
                await self._one(number, action)
            except PlaywrightError as exc:
                why = f"action {number} ({_label(action)}): {_first_line(exc)}"
                raise ActionFailed(why) from None
            except TimeoutError:
                raise ActionFailed(
                    f"action {number} ({_label(action)}): not done within the time left"
                ) from None
        return ActionAnswers(
            tuple(self._shots), tuple(self._scrapes), tuple(self._returns), tuple(self._pdfs)
        )

    def left_ms(self) -> float:
        """Playwright's timeout for a step: the time left (never 0, which waits forever)."""
        return max(1.0, (self._deadline - MARGIN_S - time.monotonic()) * 1000)

    async def _one(self, number: int, action: Action) -> None:
        page = self._page
        if isinstance(action, Wait):
            await self._wait(action)
        elif isinstance(action, Click):
            await self._click(action)
        elif isinstance(action, Write):
            await page.keyboard.type(action.text)
        elif isinstance(action, Press):
            await page.keyboard.press(action.key)
        elif isinstance(action, Scroll):
            await self._scroll(action)
        elif isinstance(action, Scrape):
            html, whole = await page_html(page, self._output_left)
            self._spend(number, action, len(html) if whole else None)
            self._scrapes.append({"url": page.url, "html": html})
        elif isinstance(action, ExecuteJavascript):
            self._returns.append(await self._script(number, action))
        else:
            await self._file(number, action)

    async def _wait(self, action: Wait) -> None:
        if action.milliseconds is not None:
            await asyncio.sleep(action.milliseconds / 1000)
            return
        selector = f"css={action.selector}"
        await self._page.wait_for_selector(selector, state="visible", timeout=self.left_ms())

    async def _click(self, action: Click) -> None:
        targets = self._page.locator(f"css={action.selector}")
        if not action.all:
            await targets.first.click(timeout=self.left_ms())
            return
        for target in await targets.all():
            await target.click(timeout=self.left_ms())

    async def _file(self, number: int, action: Screenshot | Pdf) -> None:
        if isinstance(action, Screenshot):
            name = f"action-{number}-screenshot"
            page_size = self._page.viewport_size
            if (size := action.viewport) is not None:  # this screenshot's size only
                await self._page.set_viewport_size({"width": size.width, "height": size.height})
            try:
                shot = await capture(
                    self._page, name, action.full_page, action.quality, self._max_px
                )
            finally:
                if action.viewport is not None and page_size is not None:
                    await self._page.set_viewport_size(page_size)
            self.files.append(shot)
            self._shots.append(shot.name)
            return
        body = await self._page.pdf(
            format=action.format,
            landscape=action.landscape,
            scale=action.scale,
            page_ranges=f"1-{self._max_pdf_pages}",
        )
        name = f"action-{number}-page.pdf"
        self.files.append(PageFile(name, "application/pdf", body))
        self._pdfs.append(name)

    async def _scroll(self, action: Scroll) -> None:
        sign = -1 if action.direction == "up" else 1
        if action.selector is None:
            await self._page.evaluate("d => window.scrollBy(0, d * window.innerHeight)", sign)
            return
        target = self._page.locator(f"css={action.selector}").first
        await target.evaluate("(e, d) => e.scrollBy(0, d * e.clientHeight)", sign)

    async def _script(self, number: int, action: ExecuteJavascript) -> dict[str, Any]:
        """The script's answer, as Firecrawl gives it: ``{"type", "value"}``; its value
        measured as JSON in the page before it crosses."""
        wrapped = BOUNDED_SCRIPT.format(script=action.script, limit=self._output_left)
        limit = min(self._script_timeout_s, self._deadline - MARGIN_S - time.monotonic())
        try:
            value = await asyncio.wait_for(self._page.evaluate(wrapped), max(0.001, limit))
        except TimeoutError:
            raise PlaywrightError(f"the script ran past {self._script_timeout_s:g} s") from None
        if isinstance(value, dict) and OVER in value:
            self._spend(number, action, None)
        if isinstance(value, dict) and UNANSWERABLE in value:
            why = f"its value is not JSON ({str(value[UNANSWERABLE])[:200]})"
            raise ActionFailed(f"action {number} ({_label(action)}): {why}")
        self._spend(number, action, len(json.dumps(value, default=str)))
        return {"type": _js_type(value), "value": value}

    def _spend(self, number: int, action: Action, size: int | None) -> None:
        """Count ``size`` characters of answer (None: more than was left) against the
        actions' output; ``ActionFailed`` past it."""
        if size is None or size > self._output_left:
            raise ActionFailed(
                f"action {number} ({_label(action)}): its answer is larger than the "
                f"{self._output_left} characters left of what a page's actions may answer "
                "(SCRAPEJOBS_MAX_BODY_BYTES)"
            )
        self._output_left -= size


OVER, UNANSWERABLE = "__scrapejobs_over", "__scrapejobs_unanswerable"
# the script, as the body of an async function; its value measured as JSON in the page
BOUNDED_SCRIPT = (
    "async () => {{\n"
    "const value = await (async () => {{\n{script}\n}})();\n"
    "let json;\n"
    "try {{ json = JSON.stringify(value); }}\n"
    "catch (e) {{ return {{" + UNANSWERABLE + ": String(e)}}; }}\n"
    "if (json !== undefined && json.length > {limit}) return {{" + OVER + ": json.length}};\n"
    "return value;\n"
    "}}"
)
# the page's HTML as Page.content() makes it, cut in the page past a limit: [html, whole]
PAGE_HTML = """limit => {
  let html = document.doctype ? new XMLSerializer().serializeToString(document.doctype) : "";
  if (document.documentElement) html += document.documentElement.outerHTML;
  return html.length > limit ? [html.slice(0, limit), false] : [html, true];
}"""


async def page_html(page: Page, limit: int) -> tuple[str, bool]:
    """The page's HTML, at most ``limit`` characters (cut in the page), and whether it is
    whole."""
    html, whole = await page.evaluate(PAGE_HTML, limit)
    if not isinstance(html, str):
        raise PlaywrightError("the page's HTML could not be read")
    return html[:limit], bool(whole) and len(html) <= limit


def _js_type(value: Any) -> str:
    if value is None:
        return "undefined"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object"


def _label(action: Action) -> str:
    target = getattr(action, "selector", None)
    return f"{action.type} {target}" if target else action.type


def _first_line(exc: PlaywrightError) -> str:
    return (exc.message or str(exc)).strip().splitlines()[0][:300]
