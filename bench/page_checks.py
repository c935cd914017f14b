"""What the honest-outcome checks cost per page, in instructions (callgrind): the bot challenge
and login wall check (``extraction.blocked_pages.blocked_page``) on the response, and the app
shell check (``extraction.visible_text.shows_nothing``) on the parsed page, each run ``CALLS``
times on a catalog product page against the same process doing nothing, so the figure is the
checks' own. Compare with the worker's instructions per page that ``make bench`` prints.

    uv run python bench/page_checks.py
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CALLS = 2000
HEADERS = {"content-type": "text/html; charset=utf-8", "server": "bench"}
URL = "http://127.0.0.1/product/123"


def run_checks(calls: int, which: str) -> None:
    from parsel import Selector

    from bench.catalog_site import product_page
    from scrapejobs_shared.extraction.blocked_pages import blocked_page
    from scrapejobs_shared.extraction.visible_text import shows_nothing

    body = product_page(123).encode()
    root = Selector(body=body, encoding="utf-8", type="html").root
    for _ in range(calls):
        if which in ("blocked_page", "both"):
            blocked_page(200, HEADERS, body, URL, ())
        if which in ("shows_nothing", "both"):
            shows_nothing(root)


def instructions(calls: int, which: str) -> int:
    done = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            __file__,
            "--run",
            str(calls),
            which,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(done.stderr[-2000:])
    return int(found.group(1))


def main() -> int:
    if sys.argv[1:2] == ["--run"]:
        run_checks(int(sys.argv[2]), sys.argv[3])
        return 0
    from bench.catalog_site import product_page

    idle = instructions(0, "both")
    print(f"a catalog product page: {len(product_page(123).encode())} bytes, {CALLS} calls each")
    for which in ("blocked_page", "shows_nothing", "both"):
        per_call = (instructions(CALLS, which) - idle) / CALLS
        print(f"  {which:<14} {per_call / 1e6:.3f} M instructions per page")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
