"""The root of every error scrapejobs raises, and its families.

A family says how an API answers its errors: ``status``, a stable ``code``, the request
``field`` at fault, and any headers or details; one handler (the dispatcher's errors.py)
answers them all, for ``/v1``, ``/v2`` (Firecrawl's shape) and the dashboard alike, and a
caller catches a family rather than a list. An error of a family may say more (its own
``code``, ``template`` or ``headers``); a new error is a subclass of the family it belongs to,
never of a built-in exception alone (tests/unit/test_architecture.py).

Errors of the work itself (a page that cannot be fetched or extracted, a stage that refuses its
input) are :class:`WorkFailed`: recorded on the task they belong to, never an API answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

REQUEST_PARTS = ("body", "query", "path", "header")  # where FastAPI says a value came from


class ScrapejobsError(Exception):
    """Root of the project's errors: a ``500`` unless a family says otherwise."""

    status: int = 500
    code: str = "internal_error"
    field: str | None = None  # the request field at fault
    template: str = "{}"  # what the answer says, ``{}`` standing for the error's text

    @property
    def message(self) -> str:
        """What the answer says: :attr:`template` with the error's text."""
        return self.template.format(self)

    def headers(self) -> dict[str, str]:
        """Headers of the answer (``Retry-After``)."""
        return {}

    def details(self) -> dict[str, Any]:
        """Fields of the answer's error beside ``code``, ``message`` and ``field``."""
        return {}


class NotFound(ScrapejobsError, LookupError):
    """What was asked for does not exist, or is not the caller's to see: ``404``."""

    status = 404
    code = "not_found"


class Conflict(ScrapejobsError):
    """The request meets the state it would change (finished, running, in flight): ``409``."""

    status = 409
    code = "conflict"


class InvalidInput(ScrapejobsError, ValueError):
    """The request (or a value in it) is refused as it is: ``422`` naming the field."""

    status = 422
    code = "invalid_request"

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        if field is not None:
            self.field = field


def field_path(loc: Sequence[Any], under: str = "", default: str = "body") -> str:
    """A validation error's location as a field: ``('body', 'urls', 3)`` -> ``urls[3]``,
    ``('query', 'page_size')`` -> ``page_size``; under ``under`` (``request.urls[3]``);
    ``default`` for the whole value."""
    path = ""
    for part in loc[1:] if loc and loc[0] in REQUEST_PARTS else loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return ".".join(filter(None, (under, path))) or default


def describe(error: Mapping[str, Any]) -> str:
    """A validation error's message as an answer says it."""
    if error.get("type") == "extra_forbidden":
        return "unknown field"
    return str(error.get("msg", "invalid value")).removeprefix("Value error, ")


def first_problem(
    errors: Sequence[Mapping[str, Any]], under: str = "", default: str = "body"
) -> tuple[str, str]:
    """The field and the message of the first of a validation's ``errors`` (pydantic's
    ``ValidationError.errors()``): the one translation of a refused value into an answer."""
    first = errors[0] if errors else {"loc": (), "msg": "invalid value"}
    return field_path(tuple(first.get("loc", ())), under, default), describe(first)


class NotAllowed(ScrapejobsError):
    """The caller may not do this: ``401`` without valid credentials, else ``403``."""

    status = 403
    code = "forbidden"


class OverQuota(ScrapejobsError):
    """The caller's quota would be passed: ``429`` with ``Retry-After``."""

    status = 429
    code = "quota_exceeded"


class Unavailable(ScrapejobsError):
    """Something the request needs did not answer in time: ``503``, try again later."""

    status = 503
    code = "dependency_unavailable"


class TimedOut(ScrapejobsError):
    """A wait for work ran out before the work ended (the work goes on): ``504``."""

    status = 504
    code = "timeout"


class WorkFailed(ScrapejobsError):
    """The work itself failed (a page, a stage, a document): recorded where it belongs."""

    code = "work_failed"
