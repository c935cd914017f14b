"""Browser actions on the real local stack: firecrawl-py's every action type, unmodified,
against a page whose content appears only after a click and typed text; each action's answer
in ``Document.actions`` (screenshots and PDFs kept in the storage emulator, served to the
job's tenant); a failing action fails the page naming it; every request a script makes is
checked like the page's own: the refused server sees none of them."""

from __future__ import annotations

import httpx
import pytest
from firecrawl import Firecrawl
from firecrawl.v2.types import (
    ClickAction,
    ExecuteJavascriptAction,
    PDFAction,
    PressAction,
    ScrapeAction,
    ScreenshotAction,
    ScrollAction,
    WaitAction,
    WriteAction,
)

from scrapejobs_client import Client
from scrapejobs_devstack.stack import Stack
from support.images import PNG, png_size
from support.jobs import all_results, submit, wait_finished

pytestmark = [pytest.mark.emulators, pytest.mark.stack]


def test_every_action_type_through_firecrawl_py(firecrawl: Firecrawl, site, renderer) -> None:
    url = f"{site.url}/interactive/fc"
    plain = firecrawl.scrape(url, formats=["markdown"])
    assert plain.markdown and "secret shelf" not in plain.markdown and plain.actions is None
    done = firecrawl.scrape(
        url,
        formats=["markdown"],
        actions=[
            WaitAction(milliseconds=50),
            ClickAction(selector="#show"),
            WaitAction(selector="#q"),
            ClickAction(selector="#q"),
            WriteAction(text="desk lamp"),
            PressAction(key="Enter"),
            WaitAction(selector=".found"),
            ScrollAction(direction="down"),
            ScreenshotAction(full_page=False),
            ScreenshotAction(viewport={"width": 400, "height": 300}),  # this one's size only
            ScreenshotAction(),
            ScrapeAction(),
            ExecuteJavascriptAction(script="return document.querySelector('.found').textContent"),
            PDFAction(format="A4"),
        ],
    )
    assert done.markdown and "The secret shelf: product 42" in done.markdown
    assert "You searched: desk lamp" in done.markdown
    actions = done.actions or {}
    assert actions["javascriptReturns"] == [{"type": "string", "value": "You searched: desk lamp"}]
    [scraped] = actions["scrapes"]
    assert scraped["url"] == url and "You searched: desk lamp" in scraped["html"]
    shots, [pdf] = actions["screenshots"], actions["pdfs"]
    with httpx.Client(headers={"Authorization": "Bearer fc-local"}) as client:
        images = [client.get(shot).content for shot in shots]
        assert all(image.startswith(PNG) for image in images)
        assert [png_size(image) for image in images] == [(1280, 800), (400, 300), (1280, 800)]
        printed = client.get(pdf)
        assert printed.headers["content-type"] == "application/pdf"
        assert printed.content.startswith(b"%PDF-")


async def test_a_failing_action_fails_the_page_naming_it(api, site, renderer) -> None:
    url = f"{site.url}/interactive/native"
    actions = [
        {"type": "click", "selector": "#show"},
        {"type": "click", "selector": "#no-such-button"},
    ]
    job = await submit(
        api, {"url": url, "options": {"timeout_s": 4, "render": {"actions": actions}}}
    )
    await wait_finished(api, job["id"])
    [page] = await all_results(api, job["id"])
    assert page["status"] == "failed"
    assert page["error"].startswith("action_failed: action 2 (click #no-such-button)")
    thrown = [{"type": "execute_javascript", "script": "throw new Error('no luck')"}]
    job = await submit(api, {"url": url, "options": {"render": {"actions": thrown}}})
    await wait_finished(api, job["id"])
    [page] = await all_results(api, job["id"])
    assert page["error"].startswith("action_failed: action 1 (execute_javascript)")
    assert "no luck" in page["error"]


async def test_a_script_reaches_no_refused_address(
    api, site, refused_server, narrowed_renderer
) -> None:
    there, accepted = refused_server
    script = (
        "try { await fetch('" + there + "'); return 'reached'; }"
        " catch (e) { return 'refused: ' + e.message; }"
    )
    image = f"new Image().src = '{there}x.png'; await new Promise(r => setTimeout(r, 300));"
    reads = [
        {"type": "execute_javascript", "script": script},
        {"type": "execute_javascript", "script": image + " return location.href;"},
    ]
    goes = [{"type": "execute_javascript", "script": f"location.href = '{there}'; return 1;"}]
    url = f"{site.url}/interactive/x"
    read = await submit(api, {"url": url, "options": {"render": {"actions": reads}}})
    went = await submit(api, {"url": url, "options": {"render": {"actions": goes}}})
    for job in (read, went):
        await wait_finished(api, job["id"])
    [page] = await all_results(api, read["id"])
    [navigated] = await all_results(api, went["id"])
    assert page["status"] == "succeeded", page
    [fetched, loaded] = page["data"]["actions"]["javascript_returns"]
    assert fetched["type"] == "string" and fetched["value"].startswith("refused: "), fetched
    assert loaded == {"type": "string", "value": url}
    # a navigation to the refused address ends the page, as the page's own would
    assert navigated["status"] == "failed", navigated
    assert navigated["error"].startswith("blocked_destination"), navigated
    assert accepted == []


def test_the_client_sends_actions_and_downloads_their_files(stack: Stack, site, renderer) -> None:
    actions = [
        {"type": "click", "selector": "#show"},
        {"type": "screenshot", "viewport": {"width": 400, "height": 300}},
    ]
    with Client(stack.config.dispatcher_url) as client:
        scraped = client.scrape(f"{site.url}/interactive/client", actions=actions)
        assert scraped.result is not None and scraped.result.status == "succeeded"
        [shot] = (scraped.result.data or {})["actions"]["screenshots"]
        assert png_size(client.download(shot)) == (400, 300)
        with pytest.raises(ValueError, match="not a job's file URL"):
            client.download(f"{site.url}/interactive/client")
        with pytest.raises(ValueError, match="render=False"):
            client.scrape(site.url, render=False, actions=actions)
