"""Every firecrawl-py a Firecrawl user may run, unmodified, with its own defaults: the first
release to speak /v2 (3.0.x, which fills in ``skipTlsVerification: true``, ``maxAge``,
``blockAds`` and the rest on every scrape, a crawl's ``scrapeOptions`` included), a mid 4.x and
the newest. Each runs in an environment of its own (``uv run --no-project --with
firecrawl-py==X``, its dependencies as PyPI had them on ``RESOLVED_AT``) through
support/firecrawl_release_driver.py: scrape, batch scrape (waited for, two pages of
documents), crawl and map of the test site. And the requests @mendable/firecrawl-js 4.x sends
by default (recorded from 4.1.0 and 4.42.0: its engines ask for Node 22), replayed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from scrapejobs_devstack.stack import Stack
from support.site import Site

pytestmark = [pytest.mark.emulators, pytest.mark.stack]

RELEASES = ("3.0.3", "4.30.0", "4.55.0")  # the first /v2 release, a mid 4.x, the newest
RESOLVED_AT = "2026-11-26T00:00:00Z"  # the SDK's own dependencies, as of this day
DRIVER = Path(__file__).parent.parent / "support" / "firecrawl_release_driver.py"


def _uv() -> str:
    found = os.environ.get("UV") or shutil.which("uv")
    assert found, "uv runs the test suite (make test), so it is on this machine"
    return found


def run_release(release: str, api_url: str, site_url: str) -> dict[str, Any]:
    command = [
        _uv(),
        "run",
        "--no-project",
        "--quiet",
        "--isolated",
        "--exclude-newer",
        RESOLVED_AT,
        "--python",
        os.path.realpath(sys.executable),  # the interpreter under the project's environment
        "--with",
        f"firecrawl-py=={release}",
        "python",
        str(DRIVER),
        api_url,
        site_url,
        uuid.uuid4().hex[:6],
    ]
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=400, check=False, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["version"] == release  # that release, not the project's own
    return result


@pytest.fixture(scope="module", params=RELEASES)
def release(request: pytest.FixtureRequest, stack: Stack, site: Site) -> dict[str, Any]:
    return run_release(request.param, stack.config.dispatcher_url, site.url)


def test_a_release_scrapes_with_its_defaults(release: dict[str, Any], site: Site) -> None:
    scrape = release["scrape"]
    assert "error" not in scrape, scrape
    assert scrape["markdown"].startswith("# Product 7")
    # 3.0's metadata model reads snake_case keys only (Firecrawl's are camelCase): empty there
    assert scrape["metadata"].get("status_code") in (200, None)
    assert any(link.startswith(site.url) for link in scrape["links"])


def test_a_release_batch_scrapes_waits_and_pages(release: dict[str, Any]) -> None:
    batch = release["batch"]
    assert "error" not in batch, batch
    assert batch["status"] == "completed" and batch["total"] == batch["completed"] == 120
    # 4.x follows next itself; 3.x leaves the second page's URL to its caller
    assert batch["followed"] == (1 if release["version"].startswith("3.") else 0)
    headings = sorted(d["markdown"].split("\n")[0] for d in batch["data"])
    assert headings == sorted(f"# Product {n}" for n in range(500, 620))  # each page once


def test_a_release_crawls_with_scrape_options(release: dict[str, Any], site: Site) -> None:
    crawl = release["crawl"]
    assert "error" not in crawl, crawl
    assert crawl["status"] == "completed"
    headings = {d["markdown"].split("\n")[0] for d in crawl["data"]}
    # its section, and what its sitemaps list (Firecrawl's default), robots.txt honoured
    paths = ("/fc/", "/fc/a", "/fc/b", "/fc/a/1", "/fc/hidden", "/fc/extra")
    assert headings == {f"# Page {path}" for path in paths}


def test_a_release_maps(release: dict[str, Any], site: Site) -> None:
    found = release["map"]
    assert "error" not in found, found
    assert found["links"][0] == f"{site.url}/fc/"
    assert f"{site.url}/fc/hidden" in found["links"]


# What @mendable/firecrawl-js 4.1.0 and 4.42.0 sent, recorded against a loopback server
# (their defaults add nothing but origin): scrape without and with formats, a batch, a crawl
# with scrape options, a map.
JS_REQUESTS = [
    ("/v2/scrape", {"url": "{site}/product/3", "origin": "js-sdk@4.42.0"}),
    ("/v2/scrape", {"url": "{site}/product/4", "formats": ["markdown"], "origin": "js-sdk@4.1.0"}),
    (
        "/v2/batch/scrape",
        {"urls": ["{site}/product/5"], "formats": ["markdown"], "origin": "js-sdk@4.42.0"},
    ),
    (
        "/v2/crawl",
        {"url": "{site}/fc/", "scrapeOptions": {"formats": ["markdown"]}, "origin": "js-sdk@4.1.0"},
    ),
    ("/v2/map", {"url": "{site}/fc/", "origin": "js-sdk@4.42.0"}),
]


@pytest.mark.parametrize(("path", "body"), JS_REQUESTS)
def test_firecrawl_js_requests_are_accepted(
    path: str, body: dict[str, Any], stack: Stack, site: Site
) -> None:
    sent = json.loads(json.dumps(body).replace("{site}", site.url))
    answer = httpx.post(f"{stack.config.dispatcher_url}{path}", json=sent, timeout=120)
    assert answer.status_code == 200, answer.text
    assert answer.json()["success"] is True
