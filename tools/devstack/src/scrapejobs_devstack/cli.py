"""``devstack``: run the local stack (``up``), stop one left running (``down``), ``demo``."""

from __future__ import annotations

import json
import logging
import signal
import time
from pathlib import Path
from types import FrameType
from typing import Any

import httpx
import typer
from rich.console import Console
from rich.table import Table

from scrapejobs_devstack.demo_site.server import serve_demo_site
from scrapejobs_devstack.local_scheduler import LocalScheduler
from scrapejobs_devstack.processes import stop_group
from scrapejobs_devstack.stack import Stack, StackConfig
from scrapejobs_shared.extraction.documents.ocr import installed_languages

STATE_FILE = Path(".devstack/state.json")
app = typer.Typer(help="Local scrapejobs stack on the gcloud emulators.", no_args_is_help=True)
console = Console()


@app.command()
def up() -> None:
    """Start emulators, topics/subscriptions, dispatcher and worker; Ctrl-C stops them all."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # not a line per health or reconcile call
    config = StackConfig.from_env()
    if STATE_FILE.exists():
        console.print("[yellow]a stack may still be running: run 'make down' first[/]")
        raise typer.Exit(1)
    stack = Stack(config)
    with console.status("starting emulators and services…"):
        stack.start()
    stack.write_state(STATE_FILE)
    _print_endpoints(stack)
    stopping = False

    def _stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    # Cloud Scheduler's part: the reconcile sweeps (the Pub/Sub emulator drops what it pushes
    # while the worker restarts) and the monitors' tick
    scheduler = LocalScheduler(
        config.dispatcher_url, tell=console.print, api_key=config.scheduler_key
    ).start()
    try:
        while not stopping and all(p.alive() for p in stack.processes()):
            time.sleep(0.5)
        for process in stack.processes():
            if not process.alive():
                console.print(f"[red]{process.name} exited; see {process.log_path}[/]")
    finally:
        console.print("stopping…")
        scheduler.stop()
        stack.stop()
        STATE_FILE.unlink(missing_ok=True)


@app.command()
def down() -> None:
    """Stop a stack that ``up`` left running (by the pids it recorded)."""
    if not STATE_FILE.exists():
        console.print("no running stack recorded")
        return
    for name, pid in json.loads(STATE_FILE.read_text()).items():
        stop_group(int(pid))
        console.print(f"stopped {name} (pid {pid})")
    STATE_FILE.unlink(missing_ok=True)


@app.command()
def demo(
    count: int = typer.Option(10, min=1, max=200),
    timeout_s: float = 60.0,
    render: bool = typer.Option(
        False, "--render", help="Scrape the script-built pages (/scripted/N) in the renderer."
    ),
) -> None:
    """Serve the bundled demo shop, submit a job to the running stack, print the results."""
    config = StackConfig.from_env()
    server, site = serve_demo_site()
    try:
        job = _submit_demo(config.dispatcher_url, site, count, render)
        console.print(f"submitted job [bold]{job['id']}[/] with {job['total']} URLs")
        final = _wait(config.dispatcher_url, job["id"], timeout_s)
        console.print(f"job {final['status']}: {final['counts']}")
        _print_results(config.dispatcher_url, job["id"])
    finally:
        server.shutdown()


def _submit_demo(dispatcher: str, site: str, count: int, render: bool) -> dict[str, Any]:
    page = "scripted" if render else "product"
    body: dict[str, Any] = {
        "urls": [f"{site}/{page}/{n}" for n in range(count)],
        "extract": {
            "title": {"css": "h1.title::text"},
            "price": {"css": "p.price span::text"},
            "tags": {"css": "li.tag::text", "all": True},
        },
        "labels": {"source": "demo"},
    }
    if render:
        body["options"] = {"render": True}
    response = httpx.post(f"{dispatcher}/v1/jobs", json=body, timeout=30)
    if response.status_code != 202:
        console.print(f"[red]submission failed: {response.status_code} {response.text}[/]")
        raise typer.Exit(1)
    job: dict[str, Any] = response.json()
    return job


def _wait(dispatcher: str, job_id: str, timeout_s: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    with console.status("waiting for the job…"):
        while time.monotonic() < deadline:
            job: dict[str, Any] = httpx.get(f"{dispatcher}/v1/jobs/{job_id}").json()
            if job["status"] in ("completed", "cancelled"):
                return job
            time.sleep(0.5)
    console.print("[red]the job did not finish in time[/]")
    raise typer.Exit(1)


def _print_results(dispatcher: str, job_id: str) -> None:
    page = httpx.get(f"{dispatcher}/v1/jobs/{job_id}/results", params={"page_size": 200}).json()
    table = Table("url", "status", "data", "ms")
    for result in page["results"]:
        table.add_row(
            result["url"], result["status"], json.dumps(result["data"]), str(result["elapsed_ms"])
        )
    console.print(table)


def _print_endpoints(stack: Stack) -> None:
    c = stack.config
    table = Table("component", "where", "pid", title="scrapejobs local stack")
    assert stack.pubsub and stack.firestore and stack.dispatcher and stack.worker
    table.add_row(
        "dispatcher",
        f"{c.dispatcher_url}  (API docs: {c.dispatcher_url}/docs)",
        str(stack.dispatcher.pid),
    )
    table.add_row("worker", f"{c.worker_url}/pubsub/push", str(stack.worker.pid))
    if stack.renderer is not None:
        table.add_row(
            "renderer (render lane)",
            f"{c.renderer_url}/pubsub/push  (Chromium: {c.render_browser})",
            str(stack.renderer.pid),
        )
    else:
        table.add_row("renderer", "not started: no chromium (apt-get install chromium)", "-")
    languages = installed_languages()
    ocr = (
        f"languages: {', '.join(languages)}"
        if languages
        else ("not installed: scans and images fail (apt-get install tesseract-ocr-eng)")
    )
    table.add_row("OCR (Tesseract)", ocr, "-")
    table.add_row("pubsub emulator", stack.pubsub.host, str(stack.pubsub.process.pid))
    table.add_row("firestore emulator", stack.firestore.host, str(stack.firestore.process.pid))
    if stack.storage is not None:
        table.add_row("storage emulator", stack.storage.host, str(stack.storage.process.pid))
    console.print(table)
    console.print(f"logs: {c.log_dir}/  ·  try: make demo  ·  Ctrl-C stops everything")


def main() -> None:
    app()
