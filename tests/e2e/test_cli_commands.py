"""The ``scrapejobs`` CLI against the real local stack (emulators, both services, a local site):
every command, its --json output, its exit codes, and "not found" for an unknown job."""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from typer.testing import CliRunner, Result

from scrapejobs_client.cli import ExitCode, app
from scrapejobs_devstack.demo_site.scan_writer import image_bytes, scanned, text_pdf
from scrapejobs_devstack.stack import DEV_WEBHOOK_SECRET
from support.jobs import PRODUCT_FIELDS
from support.scans import scan_pages, word_f1
from support.webhook_receiver import WebhookReceiver

pytestmark = [pytest.mark.emulators, pytest.mark.stack]
UNKNOWN_JOB = "0123456789abcdef0123456789abcdef"

Cli = Callable[..., Result]


@pytest.fixture
def cli(stack) -> Cli:
    runner = CliRunner()

    def run(*args: str, input: str | None = None) -> Result:
        arguments = ["--api", stack.config.dispatcher_url, *args]
        # a wide terminal: Rich wraps table cells to the width it finds
        env = {"COLUMNS": "400"}
        return runner.invoke(app, arguments, input=input, env=env, catch_exceptions=False)

    return run


@pytest.fixture
def extract_yaml(tmp_path: Path) -> Path:
    path = tmp_path / "extract.yaml"
    path.write_text(yaml.safe_dump(PRODUCT_FIELDS))
    return path


def json_lines(result: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def test_submit_urls_as_arguments_then_status(cli: Cli, site, tmp_path: Path) -> None:
    extract = tmp_path / "extract.json"
    extract.write_text(json.dumps(PRODUCT_FIELDS))
    urls = [f"{site.url}/product/{n}" for n in (1, 2)]

    submitted = cli("submit", *urls, "--extract", str(extract), "--label", "t=cli", "--json")

    assert submitted.exit_code == 0, submitted.output
    [job] = json_lines(submitted)
    assert job["total"] == 2 and job["labels"] == {"t": "cli"}
    shown = cli("status", job["id"], "--json")
    assert shown.exit_code == 0 and json_lines(shown)[0]["id"] == job["id"]
    waited = cli("status", job["id"], "--wait", "--interval", "0.3", "--json")
    assert waited.exit_code == 0, waited.output
    assert json_lines(waited)[-1]["counts"]["succeeded"] == 2
    human = cli("status", job["id"])
    assert human.exit_code == 0 and job["id"] in human.stdout and "succeeded 2" in human.stdout


def test_submit_with_a_priority_and_a_webhook_on_the_real_api(cli: Cli, site) -> None:
    receiver = WebhookReceiver(DEV_WEBHOOK_SECRET).start()
    try:
        submitted = cli(
            "submit",
            f"{site.url}/product/5",
            "--priority",
            "high",
            "--webhook",
            f"{receiver.url}/cli",
            "--wait",
            "--json",
        )
        assert submitted.exit_code == 0, submitted.output
        final = json_lines(submitted)[-1]
        assert final["priority"] == "high" and final["counts"]["succeeded"] == 1
        deadline = time.monotonic() + 30
        while not receiver.for_path("/cli"):
            assert time.monotonic() < deadline, "no webhook arrived"
            time.sleep(0.2)
    finally:
        receiver.stop()
    [delivery] = receiver.for_path("/cli")
    assert delivery.payload is not None and delivery.payload["type"] == "job.completed"


def test_submit_from_a_file_waits_with_progress_and_ends_with_the_final_job(
    cli: Cli, site, tmp_path: Path, extract_yaml: Path
) -> None:
    urls = tmp_path / "urls.txt"
    lines = [f"{site.url}/product/{n}" for n in range(20, 45)]
    urls.write_text("# catalog pages\n" + "\n".join(lines) + "\n\n")

    result = cli(
        "submit", "-f", str(urls), "-e", str(extract_yaml), "--wait", "--interval", "0.3", "--json"
    )

    assert result.exit_code == 0, result.output
    accepted, *_, final = json_lines(result)
    assert accepted["status"] == "queued" and accepted["total"] == 25
    assert final["id"] == accepted["id"] and final["status"] == "completed"
    assert final["counts"]["succeeded"] == 25
    assert final["progress"]["percent"] == 100 and final["progress"]["eta_s"] == 0
    assert "25/25" in result.stderr  # the progress bar, on stderr


def test_submit_from_stdin_and_results_in_every_format(
    cli: Cli, site, tmp_path: Path, extract_yaml: Path
) -> None:
    urls = [f"{site.url}/product/{n}" for n in range(50, 55)] + [f"{site.url}/status/404/cli-r"]
    stdin = "\n".join(urls) + "\n"

    result = cli("submit", "-", "-e", str(extract_yaml), "--wait", "--interval", "0.3", input=stdin)

    assert result.exit_code == ExitCode.JOB_UNSUCCESSFUL, result.output  # the 404
    job_id = result.stdout.split("submitted job ", 1)[1].split()[0]
    assert "failed 1" in result.stdout

    jsonl = cli("results", job_id, "--format", "jsonl", "--page-size", "2")
    assert jsonl.exit_code == 0, jsonl.output
    rows = json_lines(jsonl)
    assert sorted(r["url"] for r in rows) == sorted(urls)
    by_url = {r["url"]: r for r in rows}
    assert by_url[urls[0]]["data"]["title"] == "Product 50"
    assert by_url[urls[-1]]["status"] == "failed" and by_url[urls[-1]]["http_status"] == 404
    assert json_lines(cli("results", job_id, "--json", "--page-size", "4")) == rows

    out = tmp_path / "results.csv"
    written = cli("results", job_id, "--format", "csv", "-o", str(out), "--page-size", "3")
    assert written.exit_code == 0 and "wrote 6 results" in written.stderr
    with out.open(newline="") as handle:
        table = list(csv.DictReader(handle))
    assert sorted(r["url"] for r in table) == sorted(urls)
    product = next(r for r in table if r["url"] == urls[1])
    assert product["data.title"] == "Product 51" and product["status"] == "succeeded"
    assert json.loads(product["data.tags"]) == by_url[urls[1]]["data"]["tags"]

    shown = cli("results", job_id, "--format", "table")
    assert shown.exit_code == 0 and "Product 52" in shown.stdout and "HTTP 404" in shown.stdout
    saved = tmp_path / "results.txt"
    assert cli("results", job_id, "-o", str(saved)).exit_code == 0
    assert "Product 53" in saved.read_text()


def test_ls_pages_and_filters(cli: Cli, site) -> None:
    ids = []
    for n in range(3):
        submitted = cli("submit", f"{site.url}/product/{60 + n}", "--json")
        ids.append(json_lines(submitted)[0]["id"])

    # newest first (other tests' jobs may be stamped later: compare positions, not the head)
    listed = [j["id"] for j in json_lines(cli("ls", "--limit", "200", "--json"))[0]["jobs"]]
    positions = [listed.index(job_id) for job_id in ids[::-1]]
    assert positions == sorted(positions)
    first = json_lines(cli("ls", "--limit", "2", "--json"))[0]
    assert [j["id"] for j in first["jobs"]] == listed[:2]
    assert first["next_page_token"]
    token = first["next_page_token"]
    second = json_lines(cli("ls", "--limit", "1", "--page-token", token, "--json"))
    assert [j["id"] for j in second[0]["jobs"]] == [listed[2]]

    human = cli("ls", "--limit", "2")
    assert human.exit_code == 0 and listed[0] in human.stdout and "--page-token" in human.stderr
    for job_id in ids:
        cli("status", job_id, "--wait", "--interval", "0.3")
    completed = json_lines(cli("ls", "--status", "completed", "--limit", "50", "--json"))[0]
    assert {j["status"] for j in completed["jobs"]} == {"completed"}
    assert set(ids) <= {j["id"] for j in completed["jobs"]}
    assert cli("ls", "--status", "bogus").exit_code == ExitCode.USAGE


def test_cancel(cli: Cli, site) -> None:
    urls = [f"{site.url}/slow/cli-cancel-{n}?s=2" for n in range(40)]
    job = json_lines(cli("submit", *urls, "--json"))[0]

    cancelled = cli("cancel", job["id"])

    assert cancelled.exit_code == 0, cancelled.output
    assert f"job {job['id']}: cancelled" in cancelled.stdout
    final = cli("status", job["id"], "--wait", "--interval", "0.5", "--json")
    assert final.exit_code == ExitCode.JOB_UNSUCCESSFUL  # a cancelled job did not fully run
    last = json_lines(final)[-1]
    assert last["status"] == "cancelled" and last["counts"]["cancelled"] > 0


def test_retry_failed_tasks(cli: Cli, site) -> None:
    urls = [f"{site.url}/status/404/cli-retry", f"{site.url}/product/70"]
    submitted = cli("submit", *urls, "--wait", "--interval", "0.3", "--json")
    assert submitted.exit_code == ExitCode.JOB_UNSUCCESSFUL
    job_id = json_lines(submitted)[-1]["id"]

    retried = cli("retry", job_id, "--status", "failed", "--json")

    assert retried.exit_code == 0 and json_lines(retried) == [{"replayed": 1}]
    cli("status", job_id, "--wait", "--interval", "0.3")
    assert site.count("/status/404/cli-retry") == 2
    nothing = cli("retry", job_id)  # dead_lettered by default: there are none
    assert nothing.exit_code == 0 and "0 dead_lettered task(s)" in nothing.stdout


def test_dead_letters_ls_and_replay(cli: Cli, site, stack) -> None:
    url = f"{site.url}/switch/cli-dlq"
    submitted = cli("submit", url, f"{site.url}/product/71", "--wait", "--interval", "0.5")
    assert submitted.exit_code == ExitCode.JOB_UNSUCCESSFUL, submitted.output
    job_id = submitted.stdout.split("submitted job ", 1)[1].split()[0]

    listed = json_lines(cli("dead-letters", "ls", "--job", job_id, "--json"))[0]
    [letter] = listed["dead_letters"]
    assert letter["url"] == url and letter["error"] == "HTTP 500"
    assert letter["attempts"] == stack.config.topology.max_delivery_attempts
    by_host = cli("dead-letters", "ls", "--host", site.url + "/", "--limit", "500")
    assert by_host.exit_code == 0 and letter["task_id"] in by_host.stdout

    site.switched_on.add("cli-dlq")
    replayed = cli("dead-letters", "replay", "--job", job_id)
    assert replayed.exit_code == 0 and "1 dead letter(s) queued again" in replayed.stdout
    again = cli("dead-letters", "replay", "--job", job_id, "--json")
    assert json_lines(again) == [{"replayed": 0}]

    final = cli("status", job_id, "--wait", "--interval", "0.5", "--json")
    assert final.exit_code == 0 and json_lines(final)[-1]["counts"]["succeeded"] == 2
    assert json_lines(cli("dead-letters", "ls", "--job", job_id, "--json"))[0]["dead_letters"] == []


def test_replaying_every_dead_letter_asks_first(cli: Cli) -> None:
    refused = cli("dead-letters", "replay", input="n\n")
    assert refused.exit_code == 1 and "Replay every dead letter" in refused.stderr


def test_hosts(cli: Cli, site) -> None:
    result = cli("hosts", f"{site.url}/product/1", "--json")

    assert result.exit_code == 0, result.output
    [host] = json_lines(result)
    assert host["host"].startswith("http://127.0.0.1:") and host["paused"] is False
    human = cli("hosts", site.url)
    assert human.exit_code == 0 and "paused" in human.stdout
    bad = cli("hosts", "not a url")
    assert bad.exit_code == ExitCode.ERROR and "url:" in bad.stderr


def test_stats_history_and_health_on_the_real_api(cli: Cli) -> None:
    stats = cli("stats", "--window", "24h", "--json")
    assert stats.exit_code == 0, stats.output
    [report] = json_lines(stats)
    assert report["window"] == "24h" and set(report["tasks"]) >= {"queued", "succeeded"}
    assert cli("stats").exit_code == 0
    health = cli("health", "--json")
    [body] = json_lines(health)
    expected = {"HEALTHY": 0, "DEGRADED": ExitCode.DEGRADED, "UNHEALTHY": ExitCode.UNHEALTHY}
    assert health.exit_code == expected[body["status"]], health.output
    assert body["checks"]["firestore"]["status"] == "healthy"


@pytest.mark.parametrize(
    "command",
    [
        ["status", UNKNOWN_JOB],
        ["results", UNKNOWN_JOB],
        ["cancel", UNKNOWN_JOB],
        ["retry", UNKNOWN_JOB],
        ["delete", UNKNOWN_JOB],
    ],
)
def test_an_unknown_job_is_not_found(cli: Cli, command: list[str], tmp_path: Path) -> None:
    result = cli(*command)

    assert result.exit_code == ExitCode.ERROR
    assert f"job {UNKNOWN_JOB} not found" in result.stderr and result.stdout == ""
    as_json = cli(*command, "--json")
    error = json.loads(as_json.stderr)["error"]
    assert error["status"] == 404 and error["code"] == "not_found"
    assert as_json.stdout == ""


def test_no_file_is_written_for_an_unknown_job(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "none.jsonl"
    assert cli("results", UNKNOWN_JOB, "-o", str(out)).exit_code == ExitCode.ERROR
    assert not out.exists()


def test_api_errors_and_usage_errors(cli: Cli, site, tmp_path: Path) -> None:
    invalid = cli("submit", "ftp://example.com/x")
    assert invalid.exit_code == ExitCode.ERROR
    assert "urls[0]: " in invalid.stderr and "http or https" in invalid.stderr

    assert cli("submit").exit_code == ExitCode.USAGE
    assert cli("submit", "-e", str(tmp_path / "missing.yaml"), site.url).exit_code == 2
    not_a_mapping = tmp_path / "list.yaml"
    not_a_mapping.write_text("- a\n- b\n")
    assert cli("submit", "-e", str(not_a_mapping), site.url).exit_code == ExitCode.USAGE


def test_an_unreachable_api(tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["--api", "http://127.0.0.1:9", "--attempts", "2", "status", "abc"]

    result = runner.invoke(app, args)

    assert result.exit_code == ExitCode.ERROR
    assert "cannot reach the scrapejobs API at http://127.0.0.1:9" in result.stderr


def test_markdown_of_each_page_through_submit_scrape_and_the_jsonl_export(
    cli: Cli, site, stack
) -> None:
    urls = [f"{site.url}/product/{n}" for n in (61, 62)]
    submitted = cli("submit", *urls, "--format", "markdown", "--format", "links", "--wait")
    assert submitted.exit_code == 0, submitted.output
    job_id = submitted.stdout.split("submitted job ", 1)[1].split()[0]
    rows = {r["url"]: r for r in json_lines(cli("results", job_id, "--format", "jsonl"))}
    markdown = rows[urls[0]]["data"]["markdown"]
    assert markdown.startswith("# Product 61\n") and "- tag1" in markdown
    assert f"[next]({site.url}/product/62)" in markdown  # links made absolute
    assert rows[urls[0]]["data"]["links"] == [f"{site.url}/product/62"]

    exported = httpx.get(
        f"{stack.config.dispatcher_url}/v1/jobs/{job_id}/results:export", params={"format": "jsonl"}
    )
    assert exported.status_code == 200, exported.text
    lines = [json.loads(line) for line in exported.text.splitlines() if line]
    assert {row["data"]["markdown"] for row in lines} == {
        r["data"]["markdown"] for r in rows.values()
    }

    scraped = cli("scrape", urls[1], "--format", "markdown", "--json")
    assert scraped.exit_code == 0, scraped.output
    assert json.loads(scraped.stdout)["result"]["data"]["markdown"].startswith("# Product 62")


def test_parse_prints_a_local_files_markdown_and_says_why_one_cannot_be_read(
    cli: Cli, tmp_path: Path
) -> None:
    documents = Path(__file__).resolve().parents[1] / "data" / "documents"
    parsed = cli(
        "parse", str(documents / "pdflatex-4-pages.pdf"), "--max-pages", "2", "--page-markers"
    )
    assert parsed.exit_code == 0, parsed.output
    assert "<!-- page 2 -->" in parsed.stdout and "<!-- page 3 -->" not in parsed.stdout
    sheets = cli("parse", str(documents / "markitdown-sheets.xlsx"), "--json")
    assert sheets.exit_code == 0, sheets.output
    answer = json.loads(sheets.stdout)
    assert answer["result"]["data"]["markdown"].startswith("## Sheet1")
    assert answer["status"] == "completed" and answer["job_id"]
    broken = tmp_path / "broken.docx"
    broken.write_bytes(b"PK\x03\x04 not a document")
    refused = cli("parse", str(broken))
    assert refused.exit_code == ExitCode.JOB_UNSUCCESSFUL
    assert "broken.docx: unsupported_content: the Word (DOCX) file cannot be read" in refused.stderr


def test_parse_reads_a_scanned_image_by_ocr_unless_told_not_to(cli: Cli, tmp_path: Path) -> None:
    [page] = scan_pages(1)
    scan = tmp_path / "scan.png"
    scan.write_bytes(image_bytes(scanned(text_pdf([page]))[0]))
    parsed = cli("parse", str(scan), "--ocr-language", "eng")
    assert parsed.exit_code == 0, parsed.output
    assert "# Chapter One" in parsed.stdout and word_f1(page.text(), parsed.stdout) > 0.95
    fast = cli("parse", str(scan), "--ocr", "fast")
    assert fast.exit_code == ExitCode.JOB_UNSUCCESSFUL
    assert "scan.png: empty_content: the document has no text" in fast.stderr
