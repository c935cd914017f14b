"""The dashboard in headless Chromium while Firestore does not answer: the open tab's polls
show a banner naming it in place of the figures (htmx swaps the 503 fragment in), and the
figures come back by themselves once it answers again."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Browser, expect

from scrapejobs_devstack.stack import Stack
from support.browser import screenshot
from support.outage import paused

pytestmark = [pytest.mark.emulators, pytest.mark.stack]


async def test_an_open_tab_shows_a_banner_while_firestore_is_away(
    stack: Stack, browser: Browser, artifacts
) -> None:
    assert stack.firestore is not None
    context = await browser.new_context(base_url=stack.config.dispatcher_url)
    page = await context.new_page()
    await page.goto("/ui")
    health = page.get_by_test_id("health-status")
    await expect(health).to_have_text(re.compile("HEALTHY|DEGRADED|UNHEALTHY"))
    banner = page.locator("#overview").get_by_role("alert")
    with paused(stack.firestore.process):
        # polls every 5 s: the first after the pause may still show the kept figures
        await expect(banner).to_contain_text("Firestore is not answering", timeout=40_000)
        await screenshot(page, artifacts, "firestore-away")
    await expect(banner).to_have_count(0, timeout=40_000)
    await expect(health).to_be_visible()
    await context.close()
