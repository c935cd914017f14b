"""One headless Chromium per worker process, driven by Playwright: launched on first use from
the system's ``chromium`` (no browser download), a fresh context per page, recycled after
``pages_per_browser`` pages (a retired browser closes when its last page does) and launched
again when it dies. Its requests are all routed by the renderer; anything that escapes routing
goes to a proxy that refuses every connection (``refusing_proxy``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

from playwright.async_api import Browser, BrowserContext, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from scrapejobs_shared.ports.fetcher import RendererBusy, TransientFetchError
from scrapejobs_worker.rendering.refusing_proxy import RefusingProxy

log = logging.getLogger(__name__)

# The browser opens no connection of its own: no background services, no pings, no UDP
# outside the (refusing) proxy; loopback goes through the proxy too (Chromium bypasses it for
# loopback unless told otherwise).
CHROMIUM_ARGS = (
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--disable-sync",
    "--no-pings",
    "--metrics-recording-only",
    # WebRTC's STUN/ICE is UDP that no routing sees: none outside the proxy (the policy must be
    # forced with its value; the bare switch left pages sending STUN to any address)
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
)
CLOSE_TIMEOUT_S = 5.0


@dataclass(frozen=True, slots=True)
class BrowserPolicy:
    executable_path: str
    pages_per_browser: int = 100  # a browser is replaced after this many pages
    max_pages: int = 8  # pages rendered at once by one process
    launch_timeout_s: float = 10.0
    # Chromium's own sandbox (a user namespace and seccomp-bpf around each renderer): "auto"
    # keeps it wherever the environment allows it (a non-root user with user namespaces:
    # the renderer image runs as uid 10001) and says so when it cannot; "on" refuses to
    # render without it; "off" never asks for it
    sandbox: SandboxMode = "auto"

    def __post_init__(self) -> None:
        if self.pages_per_browser < 1 or self.max_pages < 1:
            raise ValueError("pages_per_browser and max_pages must be >= 1")


SandboxMode = Literal["auto", "on", "off"]


class BrowserCrashed(TransientFetchError):
    """The browser died or could not start: the task is retried on a fresh one."""

    reason = "render_crashed"
    host_fault = False


class BrowserProcess:
    def __init__(self, policy: BrowserPolicy) -> None:
        self._policy = policy
        self._proxy = RefusingProxy()
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._served = 0  # pages the current browser rendered
        self._retired: set[Browser] = set()
        self._lock = asyncio.Lock()
        self._slots = asyncio.Semaphore(policy.max_pages)
        self._user_agent = ""  # a current Chrome user agent, known once a browser ran
        self.launches = 0
        self.sandboxed: bool | None = None  # whether the running browser has its sandbox
        self._sandbox_refused = False

    def _wants_sandbox(self) -> bool:
        if self._policy.sandbox == "off" or self._sandbox_refused:
            return False
        # Chromium refuses its sandbox to root: "auto" does not try; "on" lets it say so
        return self._policy.sandbox == "on" or os.geteuid() != 0

    async def _start(self, *, sandbox: bool) -> Browser:
        try:
            if self._playwright is None:
                self._playwright = await async_playwright().start()
            return await self._playwright.chromium.launch(
                executable_path=self._policy.executable_path,
                args=list(CHROMIUM_ARGS),
                chromium_sandbox=sandbox,  # without it Playwright passes --no-sandbox
                proxy={"server": self._proxy.server, "bypass": "<-loopback>"},
                timeout=self._policy.launch_timeout_s * 1000,
            )
        except PlaywrightError as exc:
            raise BrowserCrashed(f"browser did not start: {exc.message}") from None

    async def user_agent(self) -> str:
        """The user agent of this Chromium (not ``HeadlessChrome``): its pages' and the
        document's, whose fetch comes before a browser page is taken."""
        if not self._user_agent:
            await self._current()
        return self._user_agent

    @contextlib.asynccontextmanager
    async def context(self, wait_s: float, **options: Any) -> AsyncIterator[BrowserContext]:
        """A fresh browser context (no cookies, cache or storage from another page), once one
        of the process's ``max_pages`` is free: ``RendererBusy`` after ``wait_s``."""
        try:
            async with asyncio.timeout(wait_s):
                await self._slots.acquire()
        except TimeoutError:
            raise RendererBusy(f"no browser page came free within {wait_s:.1f} s") from None
        try:
            browser = await self._current()
            try:
                context = await browser.new_context(user_agent=self._user_agent, **options)
            except PlaywrightError as exc:
                raise BrowserCrashed(f"browser: {exc.message}") from None
            try:
                yield context
            finally:
                if browser.is_connected():  # a dead browser's contexts died with it
                    with contextlib.suppress(PlaywrightError, TimeoutError):
                        async with asyncio.timeout(CLOSE_TIMEOUT_S):
                            await context.close()
                await self._page_done(browser)
        finally:
            self._slots.release()

    async def _current(self) -> Browser:
        async with self._lock:
            if self._browser is not None and not self._browser.is_connected():
                log.warning("browser died; launching another")
                self._browser = None
            if self._browser is None:
                self._browser = await self._launch()
                self._served = 0
            return self._browser

    async def _launch(self) -> Browser:
        browser = None
        sandboxed = False
        if self._wants_sandbox():
            try:
                browser = await self._start(sandbox=True)
                sandboxed = True
            except BrowserCrashed as exc:
                if self._policy.sandbox == "on":
                    raise BrowserCrashed(
                        f"{exc.detail} (SCRAPEJOBS_RENDER_SANDBOX=on: Chromium's sandbox needs "
                        "a non-root user and user namespaces)"
                    ) from None
                log.warning(
                    "Chromium's sandbox is not available here: rendering without it",
                    extra={"why": exc.detail},
                )
                self._sandbox_refused = True  # not tried again by this process
        if browser is None:
            browser = await self._start(sandbox=False)
        self.sandboxed = sandboxed
        log.info("browser started", extra={"sandboxed": sandboxed})
        self.launches += 1
        major = browser.version.split(".", 1)[0]
        self._user_agent = (
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
            f"Chrome/{major}.0.0.0 Safari/537.36"
        )
        log.info("browser launched", extra={"browser_version": browser.version})
        return browser

    async def _page_done(self, browser: Browser) -> None:
        async with self._lock:
            if browser is self._browser:
                self._served += 1
                if self._served >= self._policy.pages_per_browser:
                    self._browser = None  # the next page launches a fresh one
                    self._retired.add(browser)
            if browser in self._retired and not browser.contexts:
                self._retired.discard(browser)
                await _close(browser)

    async def aclose(self) -> None:
        async with self._lock:
            for browser in [*self._retired, *([self._browser] if self._browser else [])]:
                await _close(browser)
            self._retired.clear()
            self._browser = None
            if self._playwright is not None:
                with contextlib.suppress(Exception):
                    await self._playwright.stop()
                self._playwright = None
        self._proxy.close()


async def _close(browser: Browser) -> None:
    with contextlib.suppress(PlaywrightError, TimeoutError):
        async with asyncio.timeout(CLOSE_TIMEOUT_S):
            await browser.close()
