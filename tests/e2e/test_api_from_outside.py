"""The API as a stranger's fuzzer sees it: ``schemathesis run --checks all`` from a folder
outside the project (so none of its hooks load) against a dispatcher on the real Firestore and
Pub/Sub emulators, and hand-made hostile filters on every list endpoint. The in-suite fuzz
(tests/unit/dispatcher/test_api_fuzz.py) runs over in-memory adapters with hooks; this one
finds what only the real store refuses (values too long to query, reserved map keys).

The dispatcher here has a project of its own on the shared emulators (support/lone_stack):
what the fuzzer submits is stored and published, never fetched, and the other tests' jobs and
dead letters are out of its reach."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from scrapejobs_devstack.searxng_standin import SearxngStandin
from scrapejobs_devstack.stack import Stack
from support.lone_stack import lone_dispatcher as lone

pytestmark = [pytest.mark.emulators, pytest.mark.stack]

LONG = "x" * 2000
# What no schema can say, so a fuzzer without the project's hooks may be refused with a 4xx
# for a request that the schema allows: a reused Idempotency-Key (422), a page token the API
# never issued (400), a selector, XPath or regex that does not compile (422).
SCHEMA_VALID_BUT_REFUSED = "ST202"
# Firecrawl's DELETE of a crawl or a batch cancels it: the crawl stays readable (its status
# says cancelled, its errors are listed), which a stateful fuzzer reads as "deleted resource
# still available". Any other ST301 is a failure.
CANCELLED_NOT_DELETED = re.compile(r"deleted with `DELETE /v2/(crawl|batch/scrape)/[0-9a-f]+`")


@pytest.fixture(scope="module")
def lone_dispatcher(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # a scrape nobody works on answers its 202 after a second; a search provider (a SearXNG
    # stand-in that finds nothing a fuzzed query asks): a search without one is a 503
    provider = SearxngStandin()
    env = {"SCRAPEJOBS_SCRAPE_MAX_WAIT_S": "1", "SCRAPEJOBS_SEARXNG_URL": provider.url}
    try:
        with lone(stack, "scrapejobs-fuzz", tmp_path_factory.mktemp("fuzz-logs"), env) as url:
            yield url
    finally:
        provider.stop()


def test_a_fuzzer_without_our_hooks_finds_no_server_error_and_nothing_off_schema(
    lone_dispatcher: str, tmp_path: Path
) -> None:
    command = [
        sys.executable,
        "-m",
        "schemathesis.cli",
        "run",
        "--checks",
        "all",
        "--max-examples",
        "12",
        "--seed",
        "20261125",
        "--request-timeout",
        "20",
        "--no-color",
        f"{lone_dispatcher}/openapi.json",
    ]
    run = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False
    )
    output = run.stdout + run.stderr
    found = set(re.findall(r"^- (ST\d+) ", output, flags=re.MULTILINE))
    deletions = re.findall(r"deleted with `DELETE [^`]+`", output)
    if (
        "ST301" in found
        and deletions
        and all(CANCELLED_NOT_DELETED.fullmatch(d) for d in deletions)
    ):
        found.discard("ST301")
    assert "Tested:" in output, output[-3000:]  # it ran
    assert found <= {SCHEMA_VALID_BUT_REFUSED}, output[-6000:]
    assert "Network Error" not in output, output[-6000:]


LIST_FILTERS = [
    ("GET", "/v1/jobs", {"status": LONG}),
    ("GET", "/v1/jobs", {"page_token": LONG}),
    ("GET", "/v1/dead-letters", {"host": LONG}),
    ("GET", "/v1/dead-letters", {"host": f"http://{LONG}.example/"}),
    ("GET", "/v1/dead-letters", {"host": f"https~{LONG}~443"}),
    ("GET", "/v1/dead-letters", {"job_id": LONG}),
    ("GET", "/v1/dead-letters", {"page_token": LONG}),
    ("GET", f"/v1/jobs/{LONG}", {}),
    ("GET", f"/v1/jobs/{LONG}/results", {}),
    ("POST", f"/v1/jobs/{LONG}:retry", {"status": LONG}),
    ("GET", "/ui/dead-letters", {"job_id": LONG}),
]


@pytest.mark.parametrize(("method", "path", "params"), LIST_FILTERS)
def test_a_2000_character_filter_is_a_4xx_naming_it(
    lone_dispatcher: str, method: str, path: str, params: dict[str, str]
) -> None:
    response = httpx.request(method, lone_dispatcher + path, params=params, timeout=30)
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:300])
    if path.startswith("/v1") and response.status_code in (400, 422):
        named = response.json()["error"]["field"]
        assert named in params, response.text[:300]


@pytest.mark.parametrize(
    "body",
    [
        {"host": LONG},
        {"host": f"http://{LONG}.example/"},
        {"job_id": LONG},
    ],
)
def test_a_replay_filter_too_long_is_a_422_naming_it(
    lone_dispatcher: str, body: dict[str, str]
) -> None:
    response = httpx.post(f"{lone_dispatcher}/v1/dead-letters:replay", json=body, timeout=30)
    assert response.status_code == 422, response.text[:300]
    assert response.json()["error"]["field"] == next(iter(body))


@pytest.mark.parametrize(
    "body",
    [
        {"url": "http://127.0.0.1/", "labels": {"__main__": "x"}},
        {"url": "http://127.0.0.1/", "extract": {"__name__": {"css": "h1"}}},
        {"url": "http://127.0.0.1/", "options": {"headers": {"__x__": "1"}}},
    ],
)
def test_names_the_store_reserves_are_a_422(lone_dispatcher: str, body: dict[str, object]) -> None:
    response = httpx.post(f"{lone_dispatcher}/v1/jobs", json=body, timeout=30)
    assert response.status_code == 422, response.text[:300]
    assert "reserved" in response.text or "__" in response.text
