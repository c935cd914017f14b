"""Driving the dashboard in headless Chromium (Debian's package, through Playwright's Python
API, no browser download): where Chromium is, console errors, screenshots as test artefacts."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from playwright.async_api import ConsoleMessage, Error, Page

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "dashboard"


def chromium_path() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("chromium is not installed: apt-get install chromium (.ci/run does)")
    return found


def renderer_browser_path() -> str:
    """The browser the renderer drives where it is installed (``make dev``'s choice)."""
    from scrapejobs_devstack.stack import system_chromium

    found = system_chromium()
    if found is None:
        pytest.fail("chromium is not installed: apt-get install chromium-headless-shell")
    return found


class ConsoleErrors:
    """Console errors and uncaught exceptions of the pages it watches."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    def watch(self, page: Page) -> Page:
        page.on("console", self._console)
        page.on("pageerror", self._page_error)
        return page

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(f"console: {message.text} ({message.location})")

    def _page_error(self, error: Error) -> None:
        self.errors.append(f"pageerror: {error}")


async def screenshot(page: Page, artifacts: Path, name: str) -> Path:
    path = artifacts / f"{name}.png"
    await page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")  # noqa: T201
    return path
