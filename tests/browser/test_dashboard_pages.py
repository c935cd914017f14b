"""The dashboard in headless Chromium against the real stack: home → job → dead letters →
Replay (by keyboard) works end to end; no console errors; no horizontal scrolling at phone
width; an unknown job is a 404 page. Screenshots land in tests/artifacts/dashboard/."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Browser, Page, expect

from support.browser import ConsoleErrors, screenshot
from support.jobs import PRODUCT_FIELDS, submit, wait_finished

pytestmark = [pytest.mark.emulators, pytest.mark.stack]

PHONE = {"width": 375, "height": 800}
DESKTOP = {"width": 1280, "height": 900}


async def _no_horizontal_scroll(page: Page) -> None:
    widths = await page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], f"{page.url} scrolls sideways: {widths}"


async def _tab_to(page: Page, name: str, most: int = 60) -> None:
    """Press Tab until the focused element is the button called ``name``."""
    for _ in range(most):
        await page.keyboard.press("Tab")
        focused = await page.evaluate(
            "document.activeElement && document.activeElement.tagName === 'BUTTON'"
            " ? (document.activeElement.getAttribute('aria-label')"
            " || document.activeElement.textContent.trim()) : null"
        )
        if focused == name:
            return
    raise AssertionError(f"Tab never reached the button {name!r}")


async def test_home_job_dead_letters_and_replay(api, site, stack, browser: Browser, artifacts):
    failing = f"{site.url}/switch/ui-dashboard"
    urls = [failing, f"{site.url}/product/31"]
    job = await submit(api, {"urls": urls, "extract": PRODUCT_FIELDS, "labels": {"by": "ui"}})
    base = stack.config.dispatcher_url
    console = ConsoleErrors()
    context = await browser.new_context(viewport=DESKTOP, base_url=base)
    page = console.watch(await context.new_page())

    await page.goto("/ui")
    await expect(page.get_by_test_id("health-status")).to_have_text(
        re.compile("HEALTHY|DEGRADED|UNHEALTHY")
    )
    row = page.locator(f"tr[data-job-id='{job['id']}']")
    progress = row.get_by_role("progressbar", name=f"Progress of job {job['id']}")
    await expect(progress).to_be_visible()
    await expect(page.locator(".chart canvas").first).to_be_visible()
    await screenshot(page, artifacts, "home")

    await row.get_by_role("link", name=job["id"]).click()
    await expect(page).to_have_url(f"{base}/ui/jobs/{job['id']}")
    await expect(page.get_by_role("heading", level=1)).to_contain_text(job["id"])
    await expect(page.get_by_role("progressbar")).to_be_visible()
    first = await wait_finished(api, job["id"], timeout_s=120)  # the failing URL dead-letters
    assert first["counts"]["dead_lettered"] == 1
    await page.reload()
    await expect(page.get_by_test_id("job-status")).to_have_text("completed")
    errors = page.get_by_role("region", name="Errors")
    await expect(errors.get_by_text(failing)).to_be_visible()
    await expect(errors.get_by_text("HTTP 500")).to_be_visible()
    await screenshot(page, artifacts, "job")

    await (
        page.get_by_role("navigation", name="Dashboard")
        .get_by_role("link", name="Dead letters")
        .click()
    )
    await expect(page).to_have_url(f"{base}/ui/dead-letters")
    replay = page.get_by_role("button", name=f"Replay {failing}")
    await expect(replay).to_be_visible()
    await screenshot(page, artifacts, "dead-letters")

    site.switched_on.add("ui-dashboard")
    await _tab_to(page, f"Replay {failing}")
    await expect(replay).to_be_focused()
    await page.keyboard.press("Enter")
    await expect(page.get_by_role("status")).to_have_text("Replayed 1 task.")
    await expect(page.get_by_role("button", name=f"Replay {failing}")).to_have_count(0)

    final = await wait_finished(api, job["id"], timeout_s=60)
    assert final["counts"]["succeeded"] == 2 and final["counts"]["dead_lettered"] == 0
    await page.goto(f"/ui/jobs/{job['id']}")
    await expect(page.get_by_test_id("job-status")).to_have_text("completed")
    await expect(page.locator("[data-count='succeeded']")).to_have_text("2")
    await expect(page.get_by_role("progressbar")).to_have_attribute("value", "100")
    await screenshot(page, artifacts, "job-after-replay")
    await context.close()
    assert console.errors == []


async def test_replay_all_asks_first(api, site, stack, browser: Browser, artifacts):
    failing = f"{site.url}/switch/ui-replay-all"
    job = await submit(api, {"urls": [failing], "extract": PRODUCT_FIELDS})
    await wait_finished(api, job["id"], timeout_s=120)
    console = ConsoleErrors()
    context = await browser.new_context(viewport=DESKTOP, base_url=stack.config.dispatcher_url)
    page = console.watch(await context.new_page())
    await page.goto(f"/ui/dead-letters?job_id={job['id']}")
    button = page.get_by_role("button", name="Replay all of this job")

    page.once("dialog", lambda dialog: dialog.dismiss())
    await button.click()
    await expect(page.get_by_role("status")).to_have_text("")
    await expect(page.get_by_role("button", name=f"Replay {failing}")).to_be_visible()
    assert (await api.get("/v1/dead-letters", params={"job_id": job["id"]})).json()["dead_letters"]

    site.switched_on.add("ui-replay-all")
    page.once("dialog", lambda dialog: dialog.accept())
    await button.click()
    await expect(page.get_by_role("status")).to_have_text("Replayed 1 task.")
    await expect(page.get_by_test_id("no-dead-letters")).to_be_visible()
    assert (await wait_finished(api, job["id"], timeout_s=60))["counts"]["succeeded"] == 1
    await context.close()
    assert console.errors == []


async def test_pages_fit_a_phone_and_an_unknown_job_is_a_404_page(
    api, site, stack, browser: Browser, artifacts
):
    job = await submit(api, {"urls": [f"{site.url}/product/32"], "extract": PRODUCT_FIELDS})
    await wait_finished(api, job["id"])
    console = ConsoleErrors()
    context = await browser.new_context(viewport=PHONE, base_url=stack.config.dispatcher_url)
    page = console.watch(await context.new_page())
    for name, path in [
        ("phone-home", "/ui"),
        ("phone-job", f"/ui/jobs/{job['id']}"),
        ("phone-dead-letters", "/ui/dead-letters"),
        ("phone-hosts", "/ui/hosts"),
        ("phone-tenants", "/ui/tenants"),  # the stack's proxies, by label
        ("phone-search", "/ui/search"),
    ]:
        response = await page.goto(path)
        assert response is not None and response.status == 200
        await expect(page.get_by_role("main")).to_be_visible()
        await _no_horizontal_scroll(page)
        await screenshot(page, artifacts, name)
        for width in (320, 400):  # the narrowest and widest phones too
            await page.set_viewport_size({"width": width, "height": 800})
            await page.wait_for_timeout(300)  # the charts redraw 150 ms after a resize
            await _no_horizontal_scroll(page)
        await page.set_viewport_size(PHONE)
    assert console.errors == []

    missing = await page.goto("/ui/jobs/0123456789abcdef")
    assert missing is not None and missing.status == 404
    assert "text/html" in missing.headers["content-type"]
    await expect(page.get_by_role("heading", level=1)).to_have_text("Job not found")
    await _no_horizontal_scroll(page)
    await context.close()
