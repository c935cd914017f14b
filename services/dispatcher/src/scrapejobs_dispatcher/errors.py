"""Every API error is JSON: {"error": {"code", "message", "field"}} with the right status."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from scrapejobs_dispatcher.idempotent_submission import (
    IdempotencyKeyInFlight,
    IdempotencyKeyReused,
    InvalidIdempotencyKey,
)
from scrapejobs_dispatcher.job_errors import (
    InvalidFilter,
    JobAlreadyFinished,
    JobNotFound,
    JobStillRunning,
    SubmissionUnconfirmed,
    UnavailableHere,
)
from scrapejobs_dispatcher.tenant_quotas import QuotaExceeded
from scrapejobs_shared.adapters.page_token import InvalidPageToken
from scrapejobs_shared.ports.dependency_unavailable import DependencyUnavailable
from scrapejobs_web.http_errors import (
    error_response,
    install_http_error_handlers,
    unavailable_response,
)

log = logging.getLogger(__name__)


def field_path(loc: tuple[Any, ...]) -> str:
    """('body', 'urls', 3) → 'urls[3]'; ('query', 'page_size') → 'page_size';
    ('header', 'Idempotency-Key') → 'Idempotency-Key'."""
    path = ""
    for part in loc[1:] if loc and loc[0] in ("body", "query", "path", "header") else loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "body"


def describe(error: dict[str, Any]) -> str:
    if error.get("type") == "extra_forbidden":
        return "unknown field"
    message = str(error.get("msg", "invalid value"))
    return message.removeprefix("Value error, ")


async def _validation(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = list(exc.errors())
    first = errors[0] if errors else {"loc": ("body",), "msg": "invalid request"}
    field = field_path(tuple(first.get("loc", ())))
    message = f"{field}: {describe(first)}"
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more problem(s))"
    return error_response(422, "invalid_request", message, field)


async def _not_found(_: Request, exc: Exception) -> JSONResponse:
    return error_response(404, "not_found", f"job {exc} not found")


async def _finished(_: Request, exc: Exception) -> JSONResponse:
    return error_response(409, "job_finished", f"job {exc} has already completed")


async def _running(_: Request, exc: Exception) -> JSONResponse:
    message = f"job {exc} is still running: cancel it, or wait until it ends, then delete it"
    return error_response(409, "job_running", message)


async def _key_reused(_: Request, exc: Exception) -> JSONResponse:
    message = f"Idempotency-Key {exc} was used with another request body"
    return error_response(422, "idempotency_key_reused", message, "Idempotency-Key")


async def _key_in_flight(_: Request, exc: Exception) -> JSONResponse:
    message = f"a request with Idempotency-Key {exc} is still being processed: retry later"
    return error_response(409, "idempotency_key_in_flight", message, "Idempotency-Key")


async def _key_invalid(_: Request, exc: Exception) -> JSONResponse:
    return error_response(400, "invalid_idempotency_key", str(exc), "Idempotency-Key")


async def _bad_filter(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, InvalidFilter)
    return error_response(422, "invalid_request", str(exc), exc.parameter)


async def _unavailable_here(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, UnavailableHere)
    return error_response(422, "invalid_request", str(exc), exc.field)


async def _bad_token(_: Request, exc: Exception) -> JSONResponse:
    return error_response(400, "invalid_page_token", str(exc), "page_token")


async def _unavailable(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, DependencyUnavailable)
    log.warning("dependency unavailable", extra={"dependency": exc.dependency})
    return unavailable_response(exc.dependency, f"{exc}; retry later", exc.timeout_s)


async def _unconfirmed(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, SubmissionUnconfirmed)
    outage = exc.outage
    if exc.stored:
        outcome = (
            f"job {exc.job_id} is stored and its tasks are published once "
            f"{outage.dependency} answers again"
        )
    elif exc.stored is None:
        outcome = f"job {exc.job_id} may or may not have been stored"
    else:
        outcome = f"job {exc.job_id} was not stored"
    message = (
        f"{outage}: {outcome}. Retry with the same Idempotency-Key and body to get exactly "
        "one job (without a key, GET /v1/jobs/{id} tells whether it exists)"
    )
    return unavailable_response(
        outage.dependency, message, outage.timeout_s, job_id=exc.job_id, stored=exc.stored
    )


async def _over_quota(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, QuotaExceeded)
    response = error_response(429, "quota_exceeded", str(exc), exc.quota)
    response.headers["Retry-After"] = str(exc.retry_after_s)
    return response


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(QuotaExceeded, _over_quota)
    app.add_exception_handler(DependencyUnavailable, _unavailable)
    app.add_exception_handler(SubmissionUnconfirmed, _unconfirmed)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(JobNotFound, _not_found)
    app.add_exception_handler(JobAlreadyFinished, _finished)
    app.add_exception_handler(JobStillRunning, _running)
    app.add_exception_handler(IdempotencyKeyReused, _key_reused)
    app.add_exception_handler(IdempotencyKeyInFlight, _key_in_flight)
    app.add_exception_handler(InvalidIdempotencyKey, _key_invalid)
    app.add_exception_handler(InvalidPageToken, _bad_token)
    app.add_exception_handler(InvalidFilter, _bad_filter)
    app.add_exception_handler(UnavailableHere, _unavailable_here)
    install_http_error_handlers(app)
