"""What the client raises: ``ApiError`` for an answer that is an error, ``ApiUnreachable`` when
no answer came (after the retries)."""

from __future__ import annotations

from typing import Any

import httpx


class ScrapejobsError(Exception):
    """Base of everything this client raises."""


class ApiUnreachable(ScrapejobsError):
    """No HTTP answer: the connection failed or timed out on every attempt."""

    def __init__(self, url: str, cause: Exception) -> None:
        reason = str(cause) or type(cause).__name__
        super().__init__(f"cannot reach the scrapejobs API at {url}: {reason}")
        self.url = url
        self.cause = cause


class ApiError(ScrapejobsError):
    """The API answered with an error status.

    ``message`` is the API's own (``{"error": {"code", "message", "field"}}``), or the status
    line and the start of the body when the answer was not the API's JSON (a proxy, a load
    balancer). ``body`` is the parsed JSON, or the text.
    """

    def __init__(
        self,
        status: int,
        message: str,
        body: Any = None,
        *,
        code: str | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message
        self.body = body
        self.code = code
        self.field = field

    @classmethod
    def from_response(cls, response: httpx.Response) -> ApiError:
        body: Any
        try:
            body = response.json()
        except ValueError:
            body = response.text
        code = field = None
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            message: str = error["message"]
            code = error.get("code") if isinstance(error.get("code"), str) else None
            field = error.get("field") if isinstance(error.get("field"), str) else None
        elif isinstance(body, dict) and isinstance(body.get("detail"), str):
            message = body["detail"]  # FastAPI's default shape, from a server without ours
        else:
            text = body if isinstance(body, str) else response.text
            message = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()
            if text.strip():
                message += f": {text.strip()[:200]}"
        error_class = NotFound if response.status_code == 404 else cls
        return error_class(response.status_code, message, body, code=code, field=field)


class NotFound(ApiError):
    """404: the job (or the route, on a server that predates it) does not exist."""


class ScrapeTimedOut(ApiError):
    """202 from ``POST /v1/scrape``: no result within its timeout. The job goes on:
    ``job_id`` names it (``Client.wait(job_id)``, then ``Client.results(job_id)``)."""

    def __init__(self, status: int, message: str, body: Any, job_id: str) -> None:
        super().__init__(status, message, body, code="timeout")
        self.job_id = job_id

    @classmethod
    def from_response(cls, response: httpx.Response) -> ApiError:
        """The 202's ``{"job_id", "message"}``; an ``ApiError`` when it is not that."""
        try:
            body = response.json()
        except ValueError:
            body = None
        if not (isinstance(body, dict) and isinstance(body.get("job_id"), str)):
            return ApiError(response.status_code, "unexpected 202 from /v1/scrape", body)
        return cls(response.status_code, str(body.get("message", "")), body, body["job_id"])
