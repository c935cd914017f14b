"""A bounded Schemathesis run (every check) against the dispatcher over in-memory adapters: the
OpenAPI document says what the API accepts, every answer is documented, and no input makes it
fail. The same run against ``make dev``: ``uv run schemathesis run --checks all
http://127.0.0.1:8080/openapi.json`` (``schemathesis.toml`` loads the same hooks)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

from scrapejobs_devstack.searxng_standin import SearxngStandin
from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.adapters.memory.file_store import MemoryFileStore
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from support.api_fuzz_hooks import expressible_in_the_schema, without_unforgeable_values
from support.memory_dispatcher import memory_dispatcher

ROOT = Path(__file__).resolve().parents[3]


def _schema(search_provider: str, tenant_proxies: bool = False) -> Any:
    store = MemoryJobStore()
    # no worker here: a valid scrape waits 20 ms and answers its documented 202; a file store
    # (a screenshot is refused without one); a search provider (a SearXNG stand-in that finds
    # nothing a fuzzed query asks)
    settings = DispatcherSettings(
        auth_mode="none",
        scrape_max_wait_s=0.02,
        files_bucket="fuzz",
        tenant_proxies=tenant_proxies,
        searxng_url=search_provider,
    )
    app = memory_dispatcher(store, settings, file_store=MemoryFileStore())
    config = SchemathesisConfig.from_path(str(ROOT / "schemathesis.toml"))
    return schemathesis.openapi.from_asgi("/openapi.json", app, config=config)


schema = schemathesis.pytest.from_fixture("api_schema")
# the run in parts by path, each under the suite's per-test timeout (the whole API in one test took
# 360 s on a 2-core machine, past the 300 s a test gets); every path is in exactly one part
PARTS = {
    "jobs": r"^/v1/(jobs|scrape|parse|search)\b",
    "operations": (
        r"^/(healthz|v1/(hosts|maintenance|dead-letters|stats|health|workers|keys|tenants|usage))\b"
    ),
    "monitors": r"^/v1/monitors\b",
    "firecrawl_v2_pages": r"^/v2/(scrape|batch|crawl|map|search|parse)\b",
    "firecrawl_v2_team_and_monitors": r"^/v2/(team|concurrency-check|monitor)\b",
}
# tenants' own proxy pools (their routes exist where SCRAPEJOBS_TENANT_PROXIES is on; the jobs'
# proxy options are then offered whole, refused at submit where the tenant's pools serve none)
pools_schema = schemathesis.pytest.from_fixture("tenant_pools_schema").include(
    path_regex="/proxies$"
)


@pytest.fixture(scope="module")
def api_schema(monkeypatch_module: pytest.MonkeyPatch, search_provider: SearxngStandin) -> Any:
    monkeypatch_module.chdir(ROOT)  # the config names its hooks file relative to the root
    return _schema(search_provider.url)


@pytest.fixture(scope="module")
def tenant_pools_schema(
    monkeypatch_module: pytest.MonkeyPatch, search_provider: SearxngStandin
) -> Any:
    monkeypatch_module.chdir(ROOT)
    return _schema(search_provider.url, tenant_proxies=True)


@pytest.fixture(scope="module")
def search_provider() -> Iterator[SearxngStandin]:
    running = SearxngStandin()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def monkeypatch_module() -> Any:
    with pytest.MonkeyPatch.context() as patch:
        yield patch


BOUNDED = settings(
    max_examples=80, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)


def _call_and_validate(case: Any) -> None:
    # the hooks again: some generation phases build cases outside the hooked strategies
    case = without_unforgeable_values(None, case)
    if expressible_in_the_schema(None, case):
        case.call_and_validate()


@schema.include(path_regex=PARTS["jobs"]).parametrize()
@BOUNDED
def test_jobs_scrape_parse_and_search_answer_every_input_as_their_schema_says(case: Any) -> None:
    _call_and_validate(case)


@schema.include(path_regex=PARTS["operations"]).parametrize()
@BOUNDED
def test_the_operations_api_answers_every_input_as_its_schema_says(case: Any) -> None:
    _call_and_validate(case)


@schema.include(path_regex=PARTS["monitors"]).parametrize()
@BOUNDED
def test_monitors_answer_every_input_as_their_schema_says(case: Any) -> None:
    _call_and_validate(case)


@schema.include(path_regex=PARTS["firecrawl_v2_pages"]).parametrize()
@BOUNDED
def test_firecrawls_v2_pages_answer_every_input_as_their_schema_says(case: Any) -> None:
    _call_and_validate(case)


@schema.include(path_regex=PARTS["firecrawl_v2_team_and_monitors"]).parametrize()
@BOUNDED
def test_firecrawls_v2_team_and_monitors_answer_every_input_as_their_schema_says(
    case: Any,
) -> None:
    _call_and_validate(case)


def test_every_path_is_fuzzed_in_exactly_one_part(api_schema: Any) -> None:
    paths = list(api_schema.raw_schema["paths"])
    assert len(paths) > 50
    for path in paths:
        parts = [name for name, pattern in PARTS.items() if re.search(pattern, path)]
        assert len(parts) == 1, (path, parts)


@pools_schema.parametrize()
@BOUNDED
def test_a_tenants_proxy_pool_is_answered_as_its_schema_says(case: Any) -> None:
    _call_and_validate(case)
