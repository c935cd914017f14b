"""Signing in to the dashboard in api_key mode, in headless Chromium against a dispatcher of
its own on the real emulators: no session → the sign-in form and no data; a wrong key →
refused; the right key → the overview, with an HttpOnly, SameSite=Strict, expiring cookie
scoped to /ui; a form on another origin posting to a dashboard action with that cookie → 403;
the cookie opens no /v1 route; signing out ends the session."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import httpx
import pytest
from playwright.async_api import Browser, expect

from scrapejobs_devstack.processes import free_port
from scrapejobs_devstack.stack import Stack
from scrapejobs_dispatcher.tenants.api_keys import generate_api_key
from support.browser import ConsoleErrors, screenshot
from support.lone_stack import lone_dispatcher

pytestmark = [pytest.mark.emulators, pytest.mark.stack]

KEY, DIGEST = generate_api_key()


@pytest.fixture(scope="module")
def signed_dispatcher(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = {"SCRAPEJOBS_AUTH_MODE": "api_key", "SCRAPEJOBS_API_KEY_HASHES": DIGEST}
    logs = tmp_path_factory.mktemp("sign-in-logs")
    with lone_dispatcher(stack, "scrapejobs-sign-in", logs, env) as url:
        yield url


async def test_sign_in_sign_out_and_what_the_cookie_opens(
    signed_dispatcher: str, browser: Browser, artifacts
) -> None:
    base = signed_dispatcher
    console = ConsoleErrors()
    context = await browser.new_context(base_url=base)
    page = console.watch(await context.new_page())

    await page.goto("/ui/dead-letters")
    await expect(page).to_have_url(re.compile(r"/ui/sign-in\?next=/ui/dead-letters$"))
    await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    await expect(page.get_by_test_id("health-status")).to_have_count(0)  # no data shown
    assert await page.get_by_label("API key").get_attribute("type") == "password"
    await screenshot(page, artifacts, "sign-in")

    await page.get_by_label("API key").fill("sj_not-the-key")
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_test_id("sign-in-error")).to_have_text("That API key is not valid.")
    assert await context.cookies() == []

    await page.get_by_label("API key").fill(KEY)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page).to_have_url(f"{base}/ui/dead-letters")  # where it was going
    await page.goto("/ui")
    await expect(page.get_by_test_id("health-status")).to_have_text(
        re.compile("HEALTHY|DEGRADED|UNHEALTHY")
    )
    [cookie] = await context.cookies()
    assert cookie["name"] == "scrapejobs_session" and cookie["path"] == "/ui"
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict"
    assert cookie["secure"] is False  # plain http here; Secure over https (a unit test)
    assert time.time() < cookie["expires"] <= time.time() + 12 * 3600 + 60

    # another origin's page (same host, another port: the same *site* to the browser, so the
    # SameSite=Strict cookie goes along) posts a form to a dashboard action
    other = f"http://127.0.0.1:{free_port()}"
    evil = (
        f'<form id="f" method="post" action="{base}/ui/dead-letters/replay"></form>'
        "<script>document.getElementById('f').submit()</script>"
    )
    await page.route(
        f"{other}/**", lambda route: route.fulfill(body=evil, content_type="text/html")
    )
    async with page.expect_response(f"{base}/ui/dead-letters/replay") as posted:
        await page.goto(f"{other}/evil")
    response = await posted.value
    assert response.status == 403
    assert "scrapejobs_session" in (await response.request.all_headers()).get("cookie", "")

    # the cookie is the dashboard's, not the API's
    session = {"scrapejobs_session": cookie["value"]}
    assert httpx.get(f"{base}/v1/jobs", cookies=session).status_code == 401
    assert httpx.get(f"{base}/v1/jobs").status_code == 401
    assert httpx.get(f"{base}/v1/jobs", headers={"X-API-Key": KEY}).status_code == 200

    await page.goto("/ui")
    await page.get_by_role("button", name="Sign out").click()
    await expect(page).to_have_url(f"{base}/ui/sign-in")
    assert await context.cookies() == []
    await page.goto("/ui")
    await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    # the browser logs the refusals it was shown (the wrong key's 401, the cross-site 403)
    expected = (
        "status of 401 (Unauthorized) ({'url': '" + base + "/ui/sign-in'",
        "status of 403 (Forbidden) ({'url': '" + base + "/ui/dead-letters/replay'",
    )
    assert [e for e in console.errors if not any(x in e for x in expected)] == []
    await context.close()
