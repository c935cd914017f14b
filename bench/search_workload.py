"""Workload S: Firecrawl's search with ``scrapeOptions`` of ``S_RESULTS`` results (issue 73's
goal: answered within the slowest page's time plus ``S_GOAL_OVERHEAD_S``).

The stack's dispatcher is restarted with a SearXNG stand-in on loopback as its provider
(scrapejobs_devstack/searxng_standin.py: it answers at once, so the figure is this service's);
then, each round, a query whose results are fresh catalog pages is searched with
``scrapeOptions: {formats: ["markdown"]}``. The overhead is the search's wall time less its
job's own time (created → finished, as the job records it): the provider's answer, the
submission, the wait's polling and the answer's building. The dispatcher is restarted as it
was afterwards."""

from __future__ import annotations

import statistics
import time
from typing import Any

S_RESULTS = 5
S_ROUNDS = 5
S_GOAL_OVERHEAD_S = 1.0


def run_search_workload(ran: Any, url_sets: list[list[str]]) -> dict[str, Any]:
    """``url_sets``: the results of each round (``S_RESULTS`` fresh pages each)."""
    from datetime import datetime

    from scrapejobs_devstack.searxng_standin import SearxngStandin, result

    stack = ran.stack
    standin = SearxngStandin()
    ran.register("bench searxng stand-in", standin.stop)
    saved = dict(stack.config.dispatcher_env)
    _restart_dispatcher(stack, {**saved, "SCRAPEJOBS_SEARXNG_URL": standin.url})
    walls: list[float] = []
    jobs: list[float] = []
    try:
        for n, urls in enumerate(url_sets):
            query = f"bench search {n}"
            standin.results[query] = [result(url, f"page {i}") for i, url in enumerate(urls)]
            body = {
                "query": query,
                "limit": S_RESULTS,
                "scrapeOptions": {"formats": ["markdown"]},
            }
            started = time.perf_counter()
            answer = ran.api.post("/v2/search", json=body, timeout=ran.timeout_s).json()
            walls.append(time.perf_counter() - started)
            scraped = [item for item in answer["data"]["web"] if item.get("markdown")]
            assert len(scraped) == len(urls), answer
            job = ran.api.get("/v1/jobs", params={"page_size": 1}).json()["jobs"][0]
            detail = ran.api.get(f"/v1/jobs/{job['id']}").json()
            begun = datetime.fromisoformat(detail["created_at"])
            ended = datetime.fromisoformat(detail["finished_at"])
            jobs.append((ended - begun).total_seconds())
    finally:
        _restart_dispatcher(stack, saved)
        standin.stop()
    overheads = [wall - job for wall, job in zip(walls, jobs, strict=True)]
    figures = {
        "results": S_RESULTS,
        "rounds": len(url_sets),
        "search_wall_s_median": round(statistics.median(walls), 3),
        "job_s_median": round(statistics.median(jobs), 3),
        "overhead_s_median": round(statistics.median(overheads), 3),
        "overhead_s_max": round(max(overheads), 3),
        "goal_overhead_s": S_GOAL_OVERHEAD_S,
    }
    print(f"scrapejobs S: {figures}", flush=True)
    return figures


def _restart_dispatcher(stack: Any, env: dict[str, str]) -> None:
    stack.config.dispatcher_env.clear()
    stack.config.dispatcher_env.update(env)
    stack.dispatcher.stop()  # the stack's own dispatcher, by its process group
    stack.start_dispatcher()
