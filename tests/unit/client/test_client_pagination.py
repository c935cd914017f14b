"""Listings are iterators: the next page is fetched when the previous one is used up, with the
filters kept, and no page is fetched past a ``limit``; the models keep unknown fields."""

from __future__ import annotations

from typing import Any

import httpx

from scrapejobs_client import NO_RETRIES, Client


def paged(items_key: str, pages: list[list[dict[str, Any]]], seen: list[httpx.Request]):
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        index = int(request.url.params.get("page_token", "0"))
        more = index + 1 < len(pages)
        return httpx.Response(
            200, json={items_key: pages[index], "next_page_token": str(index + 1) if more else None}
        )

    return httpx.MockTransport(handle)


def result(n: int) -> dict[str, Any]:
    return {"id": f"t{n}", "url": f"https://shop.test/{n}", "status": "succeeded", "attempts": 1}


def job(n: int) -> dict[str, Any]:
    stamp = "2026-01-01T00:00:00Z"
    return {"id": f"j{n}", "status": "completed", "created_at": stamp, "updated_at": stamp}


def test_results_follow_the_page_tokens() -> None:
    seen: list[httpx.Request] = []
    pages = [[result(0), result(1)], [result(2)], [result(3), result(4)]]
    client = Client("http://api.test", transport=paged("results", pages, seen), retry=NO_RETRIES)

    results = list(client.results("job-1", page_size=2))

    assert [r.id for r in results] == ["t0", "t1", "t2", "t3", "t4"]
    assert [r.url.path for r in seen] == ["/v1/jobs/job-1/results"] * 3
    assert [r.url.params.get("page_token") for r in seen] == [None, "1", "2"]
    assert {r.url.params["page_size"] for r in seen} == {"2"}


def test_pages_are_fetched_lazily_and_not_past_the_limit() -> None:
    seen: list[httpx.Request] = []
    pages = [[job(0), job(1)], [job(2), job(3)], [job(4)]]
    client = Client("http://api.test", transport=paged("jobs", pages, seen), retry=NO_RETRIES)

    jobs = client.jobs(status="completed", page_size=2, limit=3)
    assert seen == []
    assert [j.id for j in jobs] == ["j0", "j1", "j2"]
    assert len(seen) == 2
    assert {r.url.params["status"] for r in seen} == {"completed"}
    assert list(client.jobs(limit=0)) == [] and len(seen) == 2


def test_page_iterators_start_from_a_token_and_expose_it() -> None:
    seen: list[httpx.Request] = []
    pages = [[job(0)], [job(1)], [job(2)]]
    client = Client("http://api.test", transport=paged("jobs", pages, seen), retry=NO_RETRIES)

    tokens = [page.next_page_token for page in client.job_pages(page_token="1")]

    assert tokens == ["2", None]


def test_dead_letters_send_their_filters() -> None:
    seen: list[httpx.Request] = []
    letter = {
        "job_id": "j1",
        "task_id": "t1",
        "url": "https://shop.test/1",
        "error": "HTTP 500",
        "attempts": 5,
        "replays": 0,
        "dead_lettered_at": "2026-01-01T00:00:00Z",
    }
    transport = paged("dead_letters", [[letter], [letter]], seen)
    client = Client("http://api.test", transport=transport, retry=NO_RETRIES)

    letters = list(client.dead_letters(job_id="j1", host="https://shop.test/", tenant="team-a"))

    assert [d.error for d in letters] == ["HTTP 500", "HTTP 500"]
    assert seen[0].url.params["job_id"] == "j1"
    assert seen[1].url.params["host"] == "https://shop.test/"
    assert [r.url.params["tenant"] for r in seen] == ["team-a", "team-a"]


def test_unknown_fields_and_statuses_are_kept() -> None:
    newer = {**result(0), "status": "skipped", "screenshot": "s.png"}
    client = Client(
        "http://api.test",
        transport=paged("results", [[newer]], []),
        retry=NO_RETRIES,
    )

    [kept] = list(client.results("j"))

    assert kept.status == "skipped" and kept.model_extra == {"screenshot": "s.png"}
    assert kept.model_dump(mode="json")["screenshot"] == "s.png"
