"""Issue-2 figures against a running `make dev` stack: a 1,000-URL job's wall time, and how
long a 10,000-URL submission takes to be accepted (that job is cancelled right after).

Run: `make dev` in one terminal, then `uv run python bench/pipeline_figures.py`.
"""

from __future__ import annotations

import os
import time

import httpx

from scrapejobs_devstack.demo_site.server import serve_demo_site

DISPATCHER = f"http://127.0.0.1:{os.environ.get('DISPATCHER_PORT', '8080')}"
FIELDS = {"title": {"css": "h1.title::text"}, "price": {"css": "p.price span::text"}}


def main() -> None:
    server, site = serve_demo_site()
    with httpx.Client(base_url=DISPATCHER, timeout=120) as api:
        urls = [f"{site}/product/{n}" for n in range(1000)]
        start = time.perf_counter()
        job = api.post("/v1/jobs", json={"urls": urls, "extract": FIELDS}).json()
        accepted = time.perf_counter() - start
        while (state := api.get(f"/v1/jobs/{job['id']}").json())["status"] != "completed":
            time.sleep(0.2)
        wall = time.perf_counter() - start
        print(
            f"1,000-URL job: accepted in {accepted:.2f} s, completed in {wall:.1f} s "
            f"({1000 / wall:.0f} pages/s), counts {state['counts']}"
        )

        big = [f"{site}/product/{n}" for n in range(10_000)]
        start = time.perf_counter()
        response = api.post("/v1/jobs", json={"urls": big, "extract": FIELDS})
        accepted = time.perf_counter() - start
        print(f"10,000-URL submission: HTTP {response.status_code} in {accepted:.2f} s")
        api.post(f"/v1/jobs/{response.json()['id']}:cancel")
    server.shutdown()


if __name__ == "__main__":
    main()
