"""``Client``: one method per endpoint of the scrapejobs REST API (synchronous, on httpx).

Every call is retried on 429 and 503 (after ``Retry-After`` when the server sends it) and on
connection errors, with exponential backoff (``RetryPolicy``). Repeating any call is safe:
reads and cancel/retry/replay change nothing the second time, and ``submit`` always sends an
``Idempotency-Key`` (a random one unless you pass your own), so a submission whose answer was
lost is not created twice. Listings come as iterators that fetch the next page when needed.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal, TypeVar

import httpx

from scrapejobs_client.auth import (
    TokenFetcher,
    choose_auth,
    fetch_google_id_token,
)
from scrapejobs_client.errors import ApiError, ApiUnreachable, ScrapeTimedOut
from scrapejobs_client.files_api import FilesApi
from scrapejobs_client.models import (
    DeadLetter,
    DeadLetterPage,
    ExportFormat,
    Health,
    HostState,
    Job,
    JobPage,
    JobSummary,
    Page,
    Priority,
    ReconcileReport,
    Replayed,
    Republished,
    ResultPage,
    RetryStatus,
    Scraped,
    Stats,
    StatsHistory,
    StatsWindow,
    TaskResult,
    Webhook,
    Worker,
)
from scrapejobs_client.monitors_api import MonitorsApi
from scrapejobs_client.paths import segment
from scrapejobs_client.request_bodies import webhook_body, with_options
from scrapejobs_client.retries import NO_RETRIES, RetryPolicy
from scrapejobs_client.search_api import SearchApi
from scrapejobs_client.tenants_api import TenantsApi
from scrapejobs_client.uploads_api import UploadsApi

DEFAULT_API_URL = "http://127.0.0.1:8080"
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_SCRAPE_WAIT_S = 30.0  # the service's default timeout_s for POST /v1/scrape
SCRAPE_ANSWER_MARGIN_S = 10.0  # a scrape's HTTP timeout: its wait plus this
IDEMPOTENCY_KEY_IN_FLIGHT = "idempotency_key_in_flight"
PageT = TypeVar("PageT", bound=Page)
Params = Mapping[str, str | int | float | None]


class Client(TenantsApi, MonitorsApi, UploadsApi, FilesApi, SearchApi):
    """A scrapejobs API client. Authentication, chosen by the arguments: ``api_key`` sends
    ``X-API-Key``; ``iam=True`` (or an ``id_token_audience``) sends a Google ID token for the
    audience (default: ``api_url``, which is what Cloud Run expects); neither sends nothing
    (local development). ``auth`` takes any other ``httpx.Auth``. ``transport`` and ``sleep``
    are for tests (``httpx.MockTransport``, a fake clock)."""

    def __init__(
        self,
        api_url: str = DEFAULT_API_URL,
        *,
        api_key: str | None = None,
        iam: bool = False,
        id_token_audience: str | None = None,
        token_fetcher: TokenFetcher = fetch_google_id_token,
        auth: httpx.Auth | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        user_agent: str = "scrapejobs-client/0.1",
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self._retry = retry or RetryPolicy()
        self._sleep = sleep
        self._http = httpx.Client(
            base_url=self.api_url,
            auth=auth or choose_auth(self.api_url, api_key, iam, id_token_audience, token_fetcher),
            timeout=timeout_s,
            transport=transport,
            headers={"User-Agent": user_agent, "Accept": "application/json"},
        )

    def __repr__(self) -> str:
        return f"Client({self.api_url!r})"

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # --- jobs ---------------------------------------------------------------------------------

    def submit(
        self,
        urls: Sequence[str] | None = None,
        *,
        url: str | None = None,
        crawl: Mapping[str, Any] | None = None,
        extract: Mapping[str, Any] | None = None,
        options: Mapping[str, Any] | None = None,
        labels: Mapping[str, str] | None = None,
        priority: Priority | None = None,
        webhook: Webhook | str | None = None,
        idempotency_key: str | None = None,
        render: bool | Literal["auto"] | Mapping[str, Any] | None = None,
        formats: Sequence[str | Mapping[str, Any]] | None = None,
        actions: Sequence[Mapping[str, Any]] | None = None,
        **fields: Any,
    ) -> Job:
        """``POST /v1/jobs``: exactly one of ``urls``, ``url`` or ``crawl``. ``render``: ``True``,
        ``"auto"`` (only pages that show nothing fetched plainly) or ``{"wait_for", "wait_ms"}``;
        ``formats``: the extras each result carries (``["markdown", "links"]``, or an object);
        ``actions``: what the browser does before each page is read (they render); ``fields``:
        sent as they are (newer request fields). docs/api.md says each."""
        body: dict[str, Any] = {
            "urls": list(urls) if urls is not None else None,
            "url": url,
            "crawl": dict(crawl) if crawl is not None else None,
            "extract": dict(extract) if extract is not None else None,
            "options": with_options(options, render, formats, actions),
            "labels": dict(labels) if labels is not None else None,
            "priority": priority,
            "webhook": webhook_body(webhook),
            **fields,
        }
        return self.submit_body(
            {k: v for k, v in body.items() if v is not None}, idempotency_key=idempotency_key
        )

    def scrape(
        self,
        url: str,
        *,
        extract: Mapping[str, Any] | None = None,
        options: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        render: bool | Literal["auto"] | Mapping[str, Any] | None = None,
        formats: Sequence[str | Mapping[str, Any]] | None = None,
        actions: Sequence[Mapping[str, Any]] | None = None,
        **fields: Any,
    ) -> Scraped:
        """``POST /v1/scrape``: one URL, answered with its result (``render``, ``formats`` and
        ``actions`` as :meth:`submit` takes them). ``ScrapeTimedOut`` (its ``job_id`` names
        the job, which goes on) when no result came within ``timeout_s`` (the service's
        default: 30 s). Never retried: a retry would scrape the page again."""
        body: dict[str, Any] = {
            "url": url,
            "extract": dict(extract) if extract is not None else None,
            "options": with_options(options, render, formats, actions),
            "timeout_s": timeout_s,
            **fields,
        }
        wait_s = timeout_s if timeout_s is not None else DEFAULT_SCRAPE_WAIT_S
        response = self._send(
            "POST",
            "/v1/scrape",
            json={k: v for k, v in body.items() if v is not None},
            accept=lambda r: r.status_code == 202,
            timeout_s=wait_s + SCRAPE_ANSWER_MARGIN_S,
            retries=False,
        )
        if response.status_code == 202:
            raise ScrapeTimedOut.from_response(response)
        return Scraped.model_validate(response.json())

    def submit_body(self, body: Mapping[str, Any], *, idempotency_key: str | None = None) -> Job:
        """``POST /v1/jobs`` with a request body as it is."""
        key = idempotency_key or f"scrapejobs-client-{uuid.uuid4().hex}"
        response = self._send(
            "POST",
            "/v1/jobs",
            json=dict(body),
            headers={"Idempotency-Key": key},
            retry_codes=frozenset({IDEMPOTENCY_KEY_IN_FLIGHT}),
        )
        return Job.model_validate(response.json())

    def get_job(self, job_id: str) -> Job:
        return Job.model_validate(self._get(f"/v1/jobs/{segment(job_id)}"))

    def list_jobs(
        self,
        status: str | None = None,
        page_size: int = 20,
        page_token: str | None = None,
        tenant: str | None = None,
    ) -> JobPage:
        """One page of ``GET /v1/jobs`` (newest first; the key's tenant's, or for an admin key
        every tenant's or ``tenant``'s)."""
        params = {
            "status": status,
            "page_size": page_size,
            "page_token": page_token,
            "tenant": tenant,
        }
        return JobPage.model_validate(self._get("/v1/jobs", params))

    def job_pages(
        self, status: str | None = None, page_size: int = 20, page_token: str | None = None
    ) -> Iterator[JobPage]:
        return self._pages(lambda token: self.list_jobs(status, page_size, token), page_token)

    def jobs(
        self, status: str | None = None, page_size: int = 20, limit: int | None = None
    ) -> Iterator[JobSummary]:
        """Every job (newest first), at most ``limit``, fetched page by page."""
        return _first(
            (job for page in self.job_pages(status, page_size) for job in page.jobs), limit
        )

    def watch(
        self, job_id: str, interval_s: float = 1.0, timeout_s: float | None = None
    ) -> Iterator[Job]:
        """The job, read every ``interval_s`` until it is finished (the last one yielded);
        ``TimeoutError`` after ``timeout_s``."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            job = self.get_job(job_id)
            yield job
            if job.finished:
                return
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"job {job_id} did not finish within {timeout_s} s")
            self._sleep(interval_s)

    def wait(self, job_id: str, interval_s: float = 1.0, timeout_s: float | None = None) -> Job:
        """The job once it is finished (see ``watch``)."""
        jobs = iter(self.watch(job_id, interval_s, timeout_s))
        job = next(jobs)
        for job in jobs:  # noqa: B007 - the last one is the answer
            pass
        return job

    def cancel(self, job_id: str) -> Job:
        """``POST /v1/jobs/{id}:cancel``: unstarted tasks are never fetched."""
        response = self._send("POST", f"/v1/jobs/{segment(job_id)}:cancel")
        return Job.model_validate(response.json())

    def retry(self, job_id: str, status: RetryStatus = "dead_lettered") -> Replayed:
        """``POST /v1/jobs/{id}:retry``: run the job's dead-lettered (or failed) tasks again."""
        path = f"/v1/jobs/{segment(job_id)}:retry"
        response = self._send("POST", path, params={"status": status})
        return Replayed.model_validate(response.json())

    def delete_job(self, job_id: str) -> None:
        """``DELETE /v1/jobs/{id}``: a finished job and everything under it (409 while it runs)."""
        self._send("DELETE", f"/v1/jobs/{segment(job_id)}")

    # --- results ------------------------------------------------------------------------------

    def results_page(
        self, job_id: str, page_size: int = 100, page_token: str | None = None
    ) -> ResultPage:
        params = {"page_size": page_size, "page_token": page_token}
        return ResultPage.model_validate(self._get(f"/v1/jobs/{segment(job_id)}/results", params))

    def result_pages(
        self, job_id: str, page_size: int = 100, page_token: str | None = None
    ) -> Iterator[ResultPage]:
        return self._pages(lambda token: self.results_page(job_id, page_size, token), page_token)

    def results(self, job_id: str, page_size: int = 100) -> Iterator[TaskResult]:
        """Every finished task's result, fetched page by page."""
        return (result for page in self.result_pages(job_id, page_size) for result in page.results)

    def export_results(
        self, job_id: str, format: ExportFormat = "jsonl", chunk_size: int = 65_536
    ) -> Iterator[bytes]:
        """``GET /v1/jobs/{id}/results:export?format=jsonl|csv``, streamed as it arrives."""
        path = f"/v1/jobs/{segment(job_id)}/results:export"
        response = self._send("GET", path, params={"format": format}, stream=True)
        try:
            yield from response.iter_bytes(chunk_size)
        finally:
            response.close()

    # --- dead letters -------------------------------------------------------------------------

    def dead_letters_page(
        self,
        job_id: str | None = None,
        host: str | None = None,
        page_size: int = 50,
        page_token: str | None = None,
        tenant: str | None = None,
    ) -> DeadLetterPage:
        """One page of ``GET /v1/dead-letters`` (the key's tenant's; an admin's: every
        tenant's, or ``tenant``'s)."""
        params = {
            "job_id": job_id,
            "host": host,
            "tenant": tenant,
            "page_size": page_size,
            "page_token": page_token,
        }
        return DeadLetterPage.model_validate(self._get("/v1/dead-letters", params))

    def dead_letter_pages(
        self,
        job_id: str | None = None,
        host: str | None = None,
        page_size: int = 50,
        page_token: str | None = None,
        tenant: str | None = None,
    ) -> Iterator[DeadLetterPage]:
        return self._pages(
            lambda token: self.dead_letters_page(job_id, host, page_size, token, tenant),
            page_token,
        )

    def dead_letters(
        self,
        job_id: str | None = None,
        host: str | None = None,
        page_size: int = 50,
        limit: int | None = None,
        tenant: str | None = None,
    ) -> Iterator[DeadLetter]:
        """Dead-lettered tasks (newest first), of one job or one host (a URL or a host key);
        ``tenant`` an admin key's filter."""
        pages = self.dead_letter_pages(job_id, host, page_size, tenant=tenant)
        return _first((letter for page in pages for letter in page.dead_letters), limit)

    def replay_dead_letters(
        self,
        job_id: str | None = None,
        host: str | None = None,
        limit: int | None = None,
        tenant: str | None = None,
    ) -> Replayed:
        """``POST /v1/dead-letters:replay``: at most ``limit`` (the API's cap: 500); ``tenant``
        an admin key's filter."""
        body = {"job_id": job_id, "host": host, "limit": limit, "tenant": tenant}
        response = self._send(
            "POST", "/v1/dead-letters:replay", json={k: v for k, v in body.items() if v is not None}
        )
        return Replayed.model_validate(response.json())

    # --- hosts, monitoring, maintenance -------------------------------------------------------

    def hosts(self, url: str) -> HostState:
        """``GET /v1/hosts?url=``: the politeness state of the URL's host."""
        return HostState.model_validate(self._get("/v1/hosts", {"url": url}))

    def workers(self) -> list[Worker]:
        """``GET /v1/workers``: worker processes heard from in the last 5 minutes."""
        listed = self._get("/v1/workers")["workers"]
        return [Worker.model_validate(entry) for entry in listed]

    def stats(self, window: StatsWindow = "5m") -> Stats:
        return Stats.model_validate(self._get("/v1/stats", {"window": window}))

    def stats_history(self, hours: int = 24) -> StatsHistory:
        return StatsHistory.model_validate(self._get("/v1/stats/history", {"hours": hours}))

    def health(self) -> Health:
        """``GET /v1/health``; an UNHEALTHY answer (a 503 with the health body) is returned, not
        raised. A 503 without that body (the service itself is down) is retried, then raised."""
        response = self._send("GET", "/v1/health", accept=_is_health_body)
        return Health.model_validate(response.json())

    def ping(self) -> bool:
        """``GET /healthz`` (liveness) answered 200."""
        self._send("GET", "/healthz")
        return True

    def republish(self, older_than_s: int = 300) -> Republished:
        response = self._send(
            "POST", "/v1/maintenance/republish", params={"older_than_s": older_than_s}
        )
        return Republished.model_validate(response.json())

    def reconcile(self, older_than_s: int | None = None, limit: int = 200) -> ReconcileReport:
        params = {"older_than_s": older_than_s, "limit": limit}
        response = self._send("POST", "/v1/maintenance/reconcile", params=params)
        return ReconcileReport.model_validate(response.json())

    # --- plumbing -----------------------------------------------------------------------------

    def _get(self, path: str, params: Params | None = None) -> Any:
        return self._send("GET", path, params=params).json()

    @staticmethod
    def _pages(fetch: Callable[[str | None], PageT], page_token: str | None) -> Iterator[PageT]:
        token = page_token
        while True:
            page = fetch(token)
            yield page
            token = page.next_page_token
            if not token:
                return

    def _send(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        stream: bool = False,
        accept: Callable[[httpx.Response], bool] | None = None,
        retry_codes: frozenset[str] = frozenset(),
        timeout_s: float | None = None,
        retries: bool = True,
        **body: Any,  # the request's body otherwise: a multipart one's files and data
    ) -> httpx.Response:
        """Send with retries (unless ``retries`` is False); return a 2xx answer (or one
        ``accept`` takes), raise the rest. ``timeout_s``: this request's, else the client's."""
        query = {k: v for k, v in (params or {}).items() if v is not None}
        extra: dict[str, Any] = {} if timeout_s is None else {"timeout": timeout_s}
        request = self._http.build_request(
            method, path, params=query, json=json, headers=headers, **extra, **body
        )
        policy = self._retry if retries else NO_RETRIES
        attempt = 0
        while True:
            try:
                response = self._http.send(request, stream=stream)
            except httpx.TransportError as exc:
                delay = policy.delay_after(attempt, None)
                if delay is None:
                    raise ApiUnreachable(self.api_url, exc) from exc
            else:
                if response.is_success or (accept is not None and _accepts(accept, response)):
                    return response
                delay = self._delay_after(attempt, response, retry_codes, policy)
                if delay is None:
                    response.read()
                    raise ApiError.from_response(response)
                response.close()
            self._sleep(delay)
            attempt += 1

    def _delay_after(
        self,
        attempt: int,
        response: httpx.Response,
        retry_codes: frozenset[str],
        policy: RetryPolicy,
    ) -> float | None:
        if retry_codes and response.status_code == 409:
            response.read()
            if ApiError.from_response(response).code in retry_codes:
                return policy.delay_after(attempt, None)
        return policy.delay_after(attempt, response)


def _accepts(accept: Callable[[httpx.Response], bool], response: httpx.Response) -> bool:
    response.read()
    return accept(response)


def _is_health_body(response: httpx.Response) -> bool:
    if response.status_code != 503:
        return False
    try:
        body = response.json()
    except ValueError:
        return False
    return isinstance(body, dict) and isinstance(body.get("status"), str) and "error" not in body


_T = TypeVar("_T")


def _first(items: Iterable[_T], limit: int | None) -> Iterator[_T]:
    """The first ``limit`` items (all when None), fetching no page past them."""
    if limit is None:
        yield from items
        return
    if limit <= 0:
        return
    for count, item in enumerate(items, start=1):
        yield item
        if count >= limit:
            return
