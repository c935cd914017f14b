"""Requests built to freeze, exhaust or leak, against the real stack: catastrophic expressions
answer at once and never stall a process, a page over the extraction budget fails
``extraction_timeout`` while the worker keeps serving, a caller without a key is refused before
its body is read, and a page titled as a spreadsheet formula is exported as text."""

from __future__ import annotations

import asyncio
import csv
import io
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import pytest
from typer.testing import CliRunner

from scrapejobs_client.cli import app as cli_app
from scrapejobs_devstack.stack import Stack
from support.jobs import all_results, submit, wait_finished
from support.lone_stack import lone_dispatcher, lone_stack
from support.site import FORMULA_TITLE

pytestmark = [pytest.mark.emulators, pytest.mark.stack]

EVIL = r"(a+)+$"
CUBIC = "count(//*[count(//*[count(//*) > 0]) > 0])"
KEY = "sj_hostile-callers-key"


class HealthProbe:
    """Calls ``/healthz`` every 50 ms in a thread; keeps the slowest answer."""

    def __init__(self, base: str) -> None:
        self._base = base
        self._stop = threading.Event()
        self.slowest_s = 0.0
        self.calls = 0
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> HealthProbe:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        with httpx.Client(base_url=self._base, timeout=30) as client:
            while not self._stop.is_set():
                started = time.monotonic()
                assert client.get("/healthz").status_code == 200
                self.slowest_s = max(self.slowest_s, time.monotonic() - started)
                self.calls += 1
                self._stop.wait(0.05)


async def test_catastrophic_expressions_at_submit_answer_at_once(stack: Stack, site) -> None:
    base = stack.config.dispatcher_url
    literal = f"//h1[re:test('{'a' * 24}!', '{EVIL}')]"
    bodies = [
        {"url": f"{site.url}/product/1", "extract": {"x": {"xpath": literal}}},
        {"url": f"{site.url}/product/1", "extract": {"x": {"css": "h1", "re": EVIL}}},
        {"url": f"{site.url}/product/1", "extract": {"x": {"css": "h1", "re": r"(a)\1"}}},
        {
            "crawl": {"start_url": f"{site.url}/", "include": [r"([\s\S]|[\s\S])*\x00"]},
            "pipeline": [{"validate": {"schema": {"properties": {"t": {"pattern": EVIL}}}}}],
        },
    ]
    with HealthProbe(base) as probe:
        async with httpx.AsyncClient(base_url=base, timeout=30) as api:
            answers = [await api.post("/v1/jobs", json=body) for body in bodies]
    assert [a.status_code for a in answers] == [202, 202, 422, 202], [a.text for a in answers]
    assert answers[2].json()["error"]["field"] == "extract.x.re"
    assert probe.calls > 0 and probe.slowest_s < 0.5


@pytest.fixture(scope="module")
def budgeted(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """A stack whose worker stops a page's extraction after 2 s."""
    logs = tmp_path_factory.mktemp("budget-logs")
    env = {"SCRAPEJOBS_EXTRACTION_BUDGET_S": "2"}
    with lone_stack(stack, "scrapejobs-budget", logs, worker_env=env) as lone:
        yield lone


async def test_a_page_over_the_budget_fails_and_the_worker_keeps_serving(
    budgeted: Stack, site
) -> None:
    base = budgeted.config.dispatcher_url
    with HealthProbe(budgeted.config.worker_url) as worker_health:
        async with httpx.AsyncClient(base_url=base, timeout=30) as api:
            cubic = await submit(
                api, {"url": f"{site.url}/many/1?n=1500", "extract": {"n": {"xpath": CUBIC}}}
            )
            await asyncio.sleep(0.5)  # the cubic page is being extracted
            plain = await submit(api, {"urls": [f"{site.url}/product/{n}" for n in (1, 2, 3)]})
            done = await wait_finished(api, plain["id"], timeout_s=60)
            assert done["counts"]["succeeded"] == 3
            await wait_finished(api, cubic["id"], timeout_s=60)
            [result] = await all_results(api, cubic["id"])
    assert result["status"] == "failed" and result["attempts"] == 1, result
    assert result["error"].startswith("extraction_timeout: ")
    assert worker_health.calls > 0 and worker_health.slowest_s < 0.5


@pytest.fixture(scope="module")
def keyed_dispatcher(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from scrapejobs_dispatcher.tenants.api_keys import hash_api_key

    env = {"SCRAPEJOBS_AUTH_MODE": "api_key", "SCRAPEJOBS_API_KEY_HASHES": hash_api_key(KEY)}
    logs = tmp_path_factory.mktemp("keyed-logs")
    with lone_dispatcher(stack, "scrapejobs-keyed", logs, env) as url:
        yield url


def _rss(port: int) -> int:
    """Resident memory of the process listening on ``port`` and its children."""
    [pid] = {c.pid for c in psutil.net_connections("tcp") if c.laddr.port == port and c.pid}
    owner = psutil.Process(pid)
    return sum(p.memory_info().rss for p in [owner, *owner.children(recursive=True)])


def _post_unauthenticated(url: str, size: int) -> bytes:
    """POST ``size`` bytes of ``[[],[],...`` without a key; the answer's first bytes."""
    host, port = url.removeprefix("http://").split(":")
    chunk = b"[]," * 21_846  # 64 KiB
    with socket.create_connection((host, int(port)), timeout=30) as conn:
        head = (
            f"POST /v1/jobs HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {size}\r\n\r\n"
        )
        conn.sendall(head.encode())
        sent = 0
        try:
            while sent < size:
                piece = chunk[: size - sent]
                conn.sendall(piece)
                sent += len(piece)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before the body was read: the server closed its side
        return conn.recv(4096)


async def test_no_key_is_a_401_before_the_body(keyed_dispatcher: str) -> None:
    async with httpx.AsyncClient(base_url=keyed_dispatcher, timeout=30) as api:
        broken = await api.post(
            "/v1/jobs", content=b"{", headers={"content-type": "application/json"}
        )
        assert broken.status_code == 401, broken.text
        v2 = await api.post(
            "/v2/scrape", content=b"{", headers={"content-type": "application/json"}
        )
        assert v2.status_code == 401 and v2.json()["success"] is False
        keyed = await api.post(
            "/v1/jobs", content=b"{", headers={"content-type": "application/json", "X-API-Key": KEY}
        )
        assert keyed.status_code == 422  # authenticated: the body is read and judged
    port = int(keyed_dispatcher.rsplit(":", 1)[1])
    before = _rss(port)
    peak = before
    stop = threading.Event()

    def watch() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, _rss(port))
            stop.wait(0.02)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        answer = await asyncio.to_thread(_post_unauthenticated, keyed_dispatcher, 20 * 1024 * 1024)
    finally:
        stop.set()
        watcher.join(timeout=10)
    assert answer.startswith(b"HTTP/1.1 401"), answer[:200]
    assert peak - before < 5 * 1024 * 1024, (before, peak)


async def test_a_page_titled_as_a_formula_is_exported_as_text(
    stack: Stack, site, tmp_path: Path
) -> None:
    base = stack.config.dispatcher_url
    async with httpx.AsyncClient(base_url=base, timeout=30) as api:
        job = await submit(
            api, {"url": f"{site.url}/formula/1", "extract": {"title": {"css": "title"}}}
        )
        await wait_finished(api, job["id"])
        exported = await api.get(f"/v1/jobs/{job['id']}/results:export", params={"format": "csv"})
    title = FORMULA_TITLE.replace("&amp;", "&")
    [row] = list(csv.DictReader(io.StringIO(exported.text)))
    assert row["data.title"] == "'" + title
    out = tmp_path / "results.csv"
    ran = CliRunner().invoke(
        cli_app, ["--api", base, "results", job["id"], "--format", "csv", "-o", str(out)]
    )
    assert ran.exit_code == 0, ran.output
    with out.open(newline="") as handle:
        [cli_row] = list(csv.DictReader(handle))
    assert cli_row["data.title"] == "'" + title


async def test_a_job_cannot_reach_the_local_stack_itself(stack: Stack) -> None:
    assert stack.firestore is not None and stack.pubsub is not None
    targets = [
        f"http://{stack.firestore.host}/v1/projects/{stack.config.project_id}/databases",
        f"http://{stack.pubsub.host}/v1/projects/{stack.config.project_id}/topics",
        f"{stack.config.dispatcher_url}/v1/jobs",
        f"{stack.config.worker_url}/healthz",
    ]
    async with httpx.AsyncClient(base_url=stack.config.dispatcher_url, timeout=30) as api:
        job = await submit(api, {"urls": targets})
        await wait_finished(api, job["id"], timeout_s=60)
        results = await all_results(api, job["id"])
    assert len(results) == 4
    for result in results:
        assert result["status"] == "failed", result
        assert result["error"].startswith("blocked_destination"), result
