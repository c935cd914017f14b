"""The workers view on a stack of its own (a dispatcher and a worker of two processes, its own
project on the suite's emulators): both processes are listed from their start, with revision,
start and last report; after a run of jobs, the pages they report add up to the tasks that
finished; the CLI and the dashboard show the same."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from scrapejobs_client import Client
from scrapejobs_client.cli.app import app as cli_app
from scrapejobs_devstack.stack import Stack
from support.jobs import submit, wait_finished
from support.lone_stack import lone_stack

pytestmark = [pytest.mark.emulators, pytest.mark.stack]


@pytest.fixture(scope="module")
def two_workers(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    logs = tmp_path_factory.mktemp("workers-logs")
    with lone_stack(stack, "scrapejobs-workers", logs, worker_processes=2) as lone:
        yield lone


def _listed(base: str) -> list[dict]:
    return httpx.get(f"{base}/v1/workers", timeout=30).json()["workers"]


async def test_two_processes_are_listed_and_their_pages_add_up(two_workers: Stack, site) -> None:
    base = two_workers.config.dispatcher_url
    at_start = _listed(base)
    assert len(at_start) == 2, at_start  # each reported itself when it started
    assert {w["revision"] for w in at_start} == {"local"}
    assert all(w["pages"] == 0 and w["in_flight"] == {"batches": 0, "pages": 0} for w in at_start)

    async with httpx.AsyncClient(base_url=base, timeout=30) as api:
        jobs = [
            await submit(
                api, {"urls": [f"{site.url}/product/{100 + j * 10 + i}" for i in range(6)]}
            )
            for j in range(10)
        ]
        for job in jobs:
            await wait_finished(api, job["id"], timeout_s=120)
    finished = 60

    deadline = time.monotonic() + 20  # the last counts ride along within about a second
    while sum((listed := _listed(base))[i]["pages"] for i in range(2)) < finished:
        assert time.monotonic() < deadline, listed
        time.sleep(0.5)
    assert len(listed) == 2
    assert sum(w["pages"] for w in listed) == finished  # nothing lost, nothing twice
    assert sum(w["batches"] for w in listed) >= len(jobs)
    assert all(w["last_seen"] >= w["started_at"] for w in listed)

    with Client(base) as client:
        assert {w.id for w in client.workers()} == {w["id"] for w in listed}
    shown = CliRunner().invoke(cli_app, ["--api", base, "workers", "--json"])
    assert shown.exit_code == 0, shown.output
    assert {w["id"] for w in json.loads(shown.output)["workers"]} == {w["id"] for w in listed}
    table = CliRunner().invoke(cli_app, ["--api", base, "workers"], terminal_width=200)
    assert table.exit_code == 0 and "revision" in table.output and "local" in table.output
    page = httpx.get(f"{base}/ui/workers", timeout=30)
    assert page.status_code == 200
    assert all(f'data-worker-id="{w["id"]}"' in page.text for w in listed)


def test_the_renderer_and_the_suite_s_worker_are_listed_too(stack: Stack, tmp_path: Path) -> None:
    listed = _listed(stack.config.dispatcher_url)
    assert len(listed) >= 1 + (stack.renderer is not None)
