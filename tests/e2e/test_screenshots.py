"""Screenshots on the real local stack: the renderer captures the settled page, the worker
keeps it in the Cloud Storage emulator under the job's tenant, and the dispatcher serves it at
the URL the result holds, for the job's retention; firecrawl-py's screenshot formats, as sent
by the SDK, answer ``Document.screenshot`` with that URL."""

from __future__ import annotations

import io

import httpx
import pytest
from firecrawl import Firecrawl
from firecrawl.v2.types import ScreenshotFormat

from support.images import JPEG, png_size
from support.jobs import PRODUCT_FIELDS, all_results, submit, wait_finished

pytestmark = [pytest.mark.emulators, pytest.mark.stack]


async def test_a_job_s_screenshots_are_kept_and_served_at_their_urls(api, site, renderer) -> None:
    url = f"{site.url}/scripted/3"  # built by its scripts: the screenshot shows them ran
    options = {"formats": ["screenshot", "markdown"]}
    viewport = await submit(api, {"url": url, "extract": PRODUCT_FIELDS, "options": options})
    full = {"type": "screenshot", "full_page": True, "quality": 70}
    whole = await submit(api, {"url": f"{site.url}/product/7", "options": {"formats": [full]}})
    for job in (viewport, whole):
        done = await wait_finished(api, job["id"])
        assert done["counts"]["succeeded"] == 1, done
    [shot] = await all_results(api, viewport["id"])
    [page] = await all_results(api, whole["id"])
    assert shot["data"]["title"] == "Product 3"  # built by its scripts
    prefix = f"{api.base_url}/v1/jobs/{viewport['id']}/files/{shot['id']}/"
    assert shot["data"]["screenshot"] == prefix + "screenshot.png"
    image = await api.get(shot["data"]["screenshot"])
    assert image.status_code == 200 and image.headers["content-type"] == "image/png"
    assert png_size(image.content) == (1280, 800)  # the viewport
    jpeg = await api.get(page["data"]["screenshot"])
    assert jpeg.headers["content-type"] == "image/jpeg" and jpeg.content.startswith(JPEG)
    # another job's path, a name that is none of its files: not found
    elsewhere = shot["data"]["screenshot"].replace(viewport["id"], whole["id"])
    assert (await api.get(elsewhere)).status_code == 404
    assert (await api.get(prefix + "screenshot-2.png")).status_code == 404
    assert (await api.get(prefix + "..%2Fx.png")).status_code in (404, 422)
    # gone with its job
    assert (await api.delete(f"/v1/jobs/{viewport['id']}")).status_code == 204
    assert (await api.get(shot["data"]["screenshot"])).status_code == 404


def test_firecrawl_py_s_screenshot_formats(firecrawl: Firecrawl, site, renderer) -> None:
    url = f"{site.url}/product/5"
    plain = firecrawl.scrape(url, formats=["screenshot"])
    tall = f"{site.url}/tall/fc?px=2500"
    whole = firecrawl.scrape(tall, formats=[ScreenshotFormat(full_page=True), "markdown"])
    sized = firecrawl.scrape(
        url,
        formats=[
            ScreenshotFormat(full_page=False, quality=60, viewport={"width": 800, "height": 600})
        ],
    )
    assert plain.markdown is None and whole.markdown and "A tall page" in whole.markdown
    with httpx.Client(headers={"Authorization": "Bearer fc-local"}) as client:
        first = client.get(plain.screenshot)
        assert png_size(first.content) == (1280, 800)
        full = client.get(whole.screenshot)
        width, height = png_size(full.content)
        assert width >= 1280 - 20 and height > 2500  # the whole page, taller than its viewport
        small = client.get(sized.screenshot)
        assert small.headers["content-type"] == "image/jpeg"
    from PIL import Image

    assert Image.open(io.BytesIO(small.content)).size == (800, 600)
    # Firecrawl's v1 name, which older SDKs send as a string
    with httpx.Client(base_url=firecrawl.api_url) as client:
        body = {"url": tall, "formats": ["screenshot@fullPage"]}
        answer = client.post("/v2/scrape", json=body, timeout=60).json()
        assert answer["success"] and answer["data"]["screenshot"].endswith("/screenshot.png")
        assert png_size(client.get(answer["data"]["screenshot"]).content)[1] > 800
