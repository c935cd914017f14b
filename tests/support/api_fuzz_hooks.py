"""Schemathesis hooks for fuzzing the dispatcher's API (loaded by ``schemathesis.toml``, by
``schemathesis run`` and by tests/unit/dispatcher/test_api_fuzz.py alike).

Two things a schema cannot say, so generated requests leave them out:

* an ``Idempotency-Key`` (``x-idempotency-key`` on /v2) names one request: the fuzzer reuses
  short keys with different bodies, which the API rightly refuses with 422 (the IETF draft's
  semantics), so every generated key is made unique;
* a ``page_token`` (``next`` on /v2) is opaque: only a token the API issued is valid (any
  other is a 400), so generated requests ask for the first page.

And what a JSON Schema cannot express, so valid-looking submissions that break it are not
generated: a CSS selector, an XPath expression or a regex must compile, a field may not be
named after a requested format, ``items`` nest at most 5 deep and need a selector that
matches elements, a ``validate`` stage's schema must itself be a valid JSON Schema, a
``transform`` stage renames no two fields to one name, a default's object keys are stored
(none empty, none ``__name__``), a URL's
host may not hold characters that Unicode normalization turns into a delimiter. The API
answers those with a 422 naming the field (tests/unit/extraction and tests/unit/dispatcher test
them). A /v2 body is judged by the native job it translates to. A monitor's schedule (cron, words, a
time zone), its rules' conditions and selectors, and the fields they name are read the same way.
An upload's JSON part (``request``, Firecrawl's ``options``) is a string to the schema: only one
that reads as what it asks of the file is generated, and for Firecrawl's parse (whose unreadable
file is a 400, as Firecrawl's), only a file of a kind it reads.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import schemathesis
from pydantic import BaseModel, ValidationError

from scrapejobs_dispatcher.firecrawl.monitor_requests import (
    MonitorBody,
    MonitorChange,
    monitor_request,
    monitor_update,
)
from scrapejobs_dispatcher.firecrawl.parse_routes import parse_request
from scrapejobs_dispatcher.firecrawl.request_models import BatchScrapeBody, CrawlBody, ScrapeBody
from scrapejobs_dispatcher.firecrawl.search_models import SearchBody, SearchBodyV1
from scrapejobs_dispatcher.firecrawl.search_translation import search_job
from scrapejobs_dispatcher.firecrawl.translation import (
    batch_request,
    crawl_request,
    scrape_request,
    valid_urls,
)
from scrapejobs_dispatcher.routes.parse import page_request
from scrapejobs_dispatcher.uploads.parsing_processes import read_upload
from scrapejobs_dispatcher.uploads.upload import Upload
from scrapejobs_dispatcher.uploads.upload_service import upload_job
from scrapejobs_shared.domain.jobspec import JobRequest, JobSpec, ScrapeRequest
from scrapejobs_shared.domain.monitors import MonitorRequest, MonitorUpdate
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.errors import ScrapejobsError
from scrapejobs_shared.options import InvalidOption, ServedHere

UNSCHEMATIC = (
    "invalid CSS selector",
    "a selector must select elements, not a pseudo-element",
    "invalid XPath expression",
    "invalid regular expression",
    "is not a valid regex",
    "clash with formats",
    "can be nested at most",
    "needs a selector matching elements",
    "invalid JSON Schema",
    "several fields renamed to",  # a rename's targets must be distinct: no schema says it
    # a host whose characters NFKC-normalize to a URL delimiter (U+FE5F is "#"): Python's
    # urlsplit refuses it; a pattern cannot follow Unicode normalization
    "invalid characters under NFKC normalization",
    # monitors: a cron expression, a schedule in words, a time zone, a condition must be
    # read; rules may name only extracted fields; a threshold needs a bound
    "cron expression",
    "is not a schedule this API reads",
    "every 1 to",
    "not a time of day",
    "an hour with am or pm",
    "unknown time zone",
    "is not a condition",
    "compares with a number",
    "a condition is at most",
    "is not a CSS selector",
    "a CSS selector of 1 to 500",
    "rules name fields the monitor does not extract",
    "together hold at most",
    "a threshold has",
    "invalid field name",
    # a default's object keys are stored: none empty or of the form __name__
    "cannot be stored",
    # Firecrawl's formats and monitors: what one format needs of another, which targets a
    # monitor here takes, what it does not offer
    "needs the markdown format too",
    "targets are not offered",
    "target needs its",
    "targets are kept",
    "leave notification out",
    "leave goal out",
    "leave judgeEnabled out",
    "is offered on /v2/scrape and in monitors",
    "a schedule has exactly one of",
    # a browser action's wait: milliseconds or a selector, one of them
    "a wait takes milliseconds or a selector",
)


SUBMISSIONS: dict[str, type[BaseModel]] = {
    "/v1/jobs": JobRequest,
    "/v1/scrape": ScrapeRequest,
    "/v1/monitors": MonitorRequest,
}
UPDATES: dict[str, dict[str, type[BaseModel]]] = {
    "/v1/monitors/{monitor_id}": {"PATCH": MonitorUpdate},
}


@schemathesis.hook("map_case")
def without_unforgeable_values(context: Any, case: Any) -> Any:
    for name, value in (case.headers or {}).items():
        if name.lower() in ("idempotency-key", "x-idempotency-key") and isinstance(value, str):
            case.headers[name] = f"{value[:200]}-{uuid.uuid4().hex}"
    positive = case.meta is not None and case.meta.generation.mode.is_positive
    if positive and isinstance(case.query, dict):
        case.query.pop("page_token", None)
        case.query.pop("next", None)  # /v2's page token
    return case


@schemathesis.hook("filter_case")
def expressible_in_the_schema(context: Any, case: Any) -> bool:
    """False for a valid-looking submission that breaks only a rule the schema cannot say."""
    positive = case.meta is not None and case.meta.generation.mode.is_positive
    post = case.method.upper() == "POST"
    if post and case.path in UPLOADS and isinstance(case.body, dict):
        if not positive:  # only what a multipart body can carry reaches the API
            return _unreadable_on_the_wire(case.path, case.body)
        return _readable_upload(case.path, case.body)
    if positive and post and case.path in FIRECRAWL and isinstance(case.body, dict):
        return _translatable(case.path, case.body)
    if positive and post and isinstance(case.body, dict) and case.body.get("search") is not None:
        return False  # what a search finds (nothing, for a fuzzed query: a 422) is no schema's
    if (
        not positive
        and post
        and case.path == "/v2/batch/scrape"
        and _invalid_urls_listed(case.body)
    ):
        return False
    method = case.method.upper()
    if positive and method == "PATCH" and case.path == "/v2/monitor/{monitor_id}":
        return _translatable_change(case.body)
    model = SUBMISSIONS.get(case.path) if post else UPDATES.get(case.path, {}).get(method)
    if not (positive and model is not None and isinstance(case.body, dict)):
        return True
    try:
        model.model_validate(case.body)
    except ValidationError as exc:
        return not any(rule in error["msg"] for error in exc.errors() for rule in UNSCHEMATIC)
    return True


FIRECRAWL = (
    "/v2/scrape",
    "/v2/batch/scrape",
    "/v2/crawl",
    "/v2/monitor",
    "/v2/search",
    "/v1/search",
)


def _invalid_urls_listed(body: Any) -> bool:
    """A batch whose only fault is URLs that ``ignoreInvalidURLs`` leaves out and lists (a 200,
    as Firecrawl answers it): the schema cannot say that a flag accepts invalid items."""
    if not isinstance(body, dict) or body.get("ignoreInvalidURLs") is not True:
        return False
    urls = body.get("urls")
    if not isinstance(urls, list) or not urls or not all(isinstance(u, str) for u in urls):
        return False
    try:
        BatchScrapeBody.model_validate({**body, "urls": ["https://example.com/"]})
    except ValidationError:
        return False
    return True


UPLOADS = {"/v1/parse": "request", "/v2/parse": "options"}  # an upload's JSON part


def _unreadable_on_the_wire(path: str, body: dict[str, Any]) -> bool:
    """Whether an invalid upload stays invalid once sent as parts: a list is no part at all, a
    part without a name is not sent, and a body of a file and its JSON part (their values
    mutated) is sent as a valid one."""
    field = UPLOADS[path]
    if isinstance(body.get(field), list):
        return False
    sent = set(body) - {""}
    return "file" not in sent or not sent <= {"file", field}


def _readable_upload(path: str, body: dict[str, Any]) -> bool:
    """False for an upload whose JSON part does not read as what it asks, or whose file does
    not read (Firecrawl's parse answers it 400; the native one keeps it as a failed job, which
    the health's error rate would count for the rest of the run)."""
    raw = body.get(UPLOADS[path])
    data = getattr(body.get("file"), "data", body.get("file"))  # schemathesis's Binary
    data = data.encode() if isinstance(data, str) else data
    if not isinstance(data, bytes):
        return False
    try:
        given = json.loads(raw) if isinstance(raw, str) and raw else None
        request = page_request(given) if path == "/v1/parse" else parse_request(given)
        upload = Upload("file", None, data)
        job = upload_job(upload, request)
    except (ValueError, ScrapejobsError):
        return False
    return read_upload(upload, JobSpec.from_request(job)).status is TaskStatus.SUCCEEDED


def _translatable(path: str, body: dict[str, Any]) -> bool:
    """False for a /v2 body whose native job breaks only a rule the schema cannot say."""
    try:
        if path == "/v2/scrape":
            scrape_request(ScrapeBody.model_validate(body))
        elif path == "/v2/monitor":
            monitor_request(MonitorBody.model_validate(body), ServedHere())
        elif path in ("/v2/search", "/v1/search"):
            return _search_translatable(path, body)
        elif path == "/v2/crawl":
            crawl = CrawlBody.model_validate(body)
            if crawl.scrape_options is not None and crawl.scrape_options.change_tracking():
                return False  # refused: nothing is compared in a crawl
            crawl_request(crawl)
        else:
            batch = BatchScrapeBody.model_validate(body)
            if batch.change_tracking() is not None:
                return False  # refused: nothing is compared in a batch
            batch_request(batch, valid_urls(batch.urls)[0] or ["https://example.com/"])
    except InvalidOption as exc:
        return not any(rule in str(exc) for rule in UNSCHEMATIC)
    except ValidationError as exc:
        return not any(rule in error["msg"] for error in exc.errors() for rule in UNSCHEMATIC)
    return True


def _search_translatable(path: str, body: dict[str, Any]) -> bool:
    """A search's scrape options, as the job of its results takes them."""
    model = SearchBody if path == "/v2/search" else SearchBodyV1
    options = model.model_validate(body).scrape_options
    if options is None:
        return True
    if options.change_tracking():
        return False  # refused: nothing is compared in a search's scrape
    search_job(options, ["https://example.com/"], ServedHere())
    return True


def _translatable_change(body: Any) -> bool:
    """False for a /v2 monitor change whose native one breaks only a rule the schema cannot
    say."""
    if not isinstance(body, dict):
        return True
    try:
        monitor_update(MonitorChange.model_validate(body))
    except InvalidOption as exc:
        return not any(rule in str(exc) for rule in UNSCHEMATIC)
    except ValidationError as exc:
        return not any(rule in error["msg"] for error in exc.errors() for rule in UNSCHEMATIC)
    return True
