"""Every API error is JSON: {"error": {"code", "message", "field"}} with the right status: the
project's errors by their family (scrapejobs_shared/errors.py), a request that does not
validate as a 422 naming its first field, and Starlette's HTTP errors (scrapejobs_web)."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from scrapejobs_dispatcher.jobs.job_errors import SubmissionUnconfirmed
from scrapejobs_shared.errors import ScrapejobsError, first_problem
from scrapejobs_shared.ports.dependency_unavailable import DependencyUnavailable
from scrapejobs_web.http_errors import error_response, install_http_error_handlers

log = logging.getLogger(__name__)


async def _validation(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = list(exc.errors())
    field, problem = first_problem(errors)
    message = f"{field}: {problem}"
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more problem(s))"
    return error_response(422, "invalid_request", message, field)


async def _answer(_: Request, exc: Exception) -> JSONResponse:
    """Every error of the project, by its family (scrapejobs_shared/errors.py)."""
    assert isinstance(exc, ScrapejobsError)
    if isinstance(exc, DependencyUnavailable):
        log.warning("dependency unavailable", extra={"dependency": exc.dependency})
    elif isinstance(exc, SubmissionUnconfirmed):
        log.warning("submission unconfirmed", extra={"job_id": exc.job_id})
    elif exc.status >= 500:
        log.error("request failed", exc_info=exc)
    response = error_response(exc.status, exc.code, exc.message, exc.field, **exc.details())
    response.headers.update(exc.headers())
    return response


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(ScrapejobsError, _answer)
    app.add_exception_handler(RequestValidationError, _validation)
    install_http_error_handlers(app)
