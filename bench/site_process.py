"""The catalog site (``catalog_site.py``) started as a process of its own on a free port."""

from __future__ import annotations

import sys
from pathlib import Path

from bench.catalog_site import PRODUCTS
from scrapejobs_devstack.processes import ManagedProcess, free_port, start_process, wait_http

SITE_SCRIPT = Path(__file__).resolve().parent / "catalog_site.py"


def start_site(log_dir: Path, prerender: int, extra_hosts: int = 0) -> tuple[ManagedProcess, str]:
    """Start the site; it listens on 127.0.0.1 and on ``extra_hosts`` more addresses
    (127.0.0.2 …, the same port), each a host of its own. Returns the process and
    ``http://127.0.0.1:PORT``."""
    port = free_port()
    argv = [
        sys.executable,
        str(SITE_SCRIPT),
        "--port",
        str(port),
        "--products",
        str(PRODUCTS),
        "--prerender",
        str(prerender),
        "--extra-hosts",
        str(extra_hosts),
    ]
    process = start_process("catalog-site", argv, {}, log_dir)
    url = f"http://127.0.0.1:{port}"
    wait_http(f"{url}/healthz", process, timeout_s=60)
    return process, url
