"""The failure table of docs/semantics.md, row by row, as the outcome policy decides it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.ports.fetcher import (
    BlockedDestination,
    FetchResponse,
    PermanentFetchError,
    RendererBusy,
    RenderTimeout,
    RenderUnavailable,
    TransientFetchError,
)
from scrapejobs_worker.rendering.browser_process import BrowserCrashed
from scrapejobs_worker.tasks.outcome_policy import (
    Attempt,
    Defer,
    Fail,
    GiveUp,
    HostSignal,
    OutcomeLimits,
    Retry,
    Succeed,
    after_fetch,
    before_fetch,
)

NOW = datetime(2026, 1, 1, tzinfo=UTC)
LIMITS = OutcomeLimits(
    max_attempts=None,
    max_delivery_attempts=5,
    max_deferrals=50,
    throttle_hold_s=10.0,
    retry_after_cap_s=300.0,
)
FIRST = Attempt(attempts=1, previous_error=None, deferrals=0)


def response(status: int, **headers: str) -> FetchResponse:
    return FetchResponse("http://a.example/", status, headers, b"", elapsed_ms=3)


CHALLENGE_PAGE = b"<html><head><title>Just a moment...</title></head><body></body></html>"
CLOUDFLARE_403 = response(403, **{"cf-mitigated": "challenge"})
CHALLENGE_200 = FetchResponse("http://a.example/", 200, {}, CHALLENGE_PAGE, elapsed_ms=3)
LOGIN_WALL = FetchResponse(
    "http://a.example/login?next=/account",
    200,
    {},
    b"<form>",
    3,
    redirects=("http://a.example/account",),
)


# (row of docs/semantics.md's table, fetch result, attempt, limits, decision, status, error, host)
ROWS = [
    ("2xx", response(200), FIRST, LIMITS, Succeed, None, None, HostSignal.RESPONDED),
    ("timeout", TransientFetchError("timed out", reason="timeout"), FIRST, LIMITS, Retry,
     None, "timeout: timed out", HostSignal.FAILED),
    ("connection error", TransientFetchError("refused"), FIRST, LIMITS, Retry, None,
     "network_error: refused", HostSignal.FAILED),
    ("5xx", response(502), FIRST, LIMITS, Retry, None, "HTTP 502", HostSignal.FAILED),
    ("408", response(408), FIRST, LIMITS, Retry, None, "HTTP 408", HostSignal.FAILED),
    ("429 with Retry-After", response(429, **{"retry-after": "20"}), FIRST, LIMITS, Defer,
     None, "throttled: HTTP 429, retry after 20 s", HostSignal.THROTTLED),
    ("429 without Retry-After", response(429), FIRST, LIMITS, Defer, None,
     "throttled: HTTP 429, retry after 10 s", HostSignal.THROTTLED),
    ("503 with Retry-After", response(503, **{"retry-after": "5"}), FIRST, LIMITS, Defer,
     None, "throttled: HTTP 503, retry after 5 s", HostSignal.THROTTLED),
    ("503 without Retry-After", response(503), FIRST, LIMITS, Retry, None, "HTTP 503",
     HostSignal.FAILED),
    ("throttled past max deferrals", response(429, **{"retry-after": "20"}),
     Attempt(1, None, deferrals=50), LIMITS, Retry, None, "HTTP 429", HostSignal.THROTTLED),
    ("still failing after max delivery attempts", response(500), Attempt(5, "HTTP 500", 0),
     LIMITS, GiveUp, TaskStatus.DEAD_LETTERED, "HTTP 500", HostSignal.FAILED),
    ("options.max_attempts reached", response(500), Attempt(2, None, 0),
     OutcomeLimits(2, 5, 50, 10.0, 300.0), GiveUp, TaskStatus.FAILED,
     "max_attempts: gave up after 2: HTTP 500", HostSignal.FAILED),
    ("other 4xx", response(404), FIRST, LIMITS, Fail, TaskStatus.FAILED, "HTTP 404",
     HostSignal.RESPONDED),
    ("blocked destination", BlockedDestination("10.0.0.1 is private"), FIRST, LIMITS, Fail,
     TaskStatus.FAILED, "blocked_destination: 10.0.0.1 is private", HostSignal.NONE),
    ("invalid request", PermanentFetchError("too many redirects", reason="redirects"), FIRST,
     LIMITS, Fail, TaskStatus.FAILED, "redirects: too many redirects", HostSignal.NONE),
    ("browser crashed", BrowserCrashed("browser: closed"), FIRST, LIMITS, Retry, None,
     "render_crashed: browser: closed", HostSignal.NONE),
    ("page never settled", RenderTimeout("did not settle"), FIRST, LIMITS, Fail,
     TaskStatus.FAILED, "render_timeout: did not settle", HostSignal.NONE),
    ("no browser here", RenderUnavailable("no browser"), FIRST, LIMITS, Fail,
     TaskStatus.FAILED, "render_unavailable: no browser", HostSignal.NONE),
    ("challenge by header", CLOUDFLARE_403, FIRST, LIMITS, Fail, TaskStatus.FAILED,
     "challenge: Cloudflare (cf-mitigated: challenge, HTTP 403)", HostSignal.THROTTLED),
    ("challenge page with 200", CHALLENGE_200, FIRST, LIMITS, Fail, TaskStatus.FAILED,
     "challenge: Cloudflare (title 'just a moment...')", HostSignal.THROTTLED),
    ("login wall", LOGIN_WALL, FIRST, LIMITS, Fail, TaskStatus.FAILED,
     "login_wall: redirected to a sign-in page: http://a.example/login?next=/account",
     HostSignal.RESPONDED),
]  # fmt: skip


@pytest.mark.parametrize(
    ("result", "attempt", "limits", "kind", "status", "error", "host"),
    [row[1:] for row in ROWS],
    ids=[row[0] for row in ROWS],
)
def test_failure_table(result, attempt, limits, kind, status, error, host) -> None:
    verdict = after_fetch(result, attempt, limits, NOW)
    decision = verdict.decision
    assert isinstance(decision, kind)
    assert verdict.host is host
    if isinstance(decision, Fail | GiveUp):
        assert decision.outcome.status is status and decision.outcome.error == error
    elif isinstance(decision, Retry):
        assert decision.error == error
    elif isinstance(decision, Defer):
        assert decision.reason == error and verdict.hold_s > 0


def test_a_challenge_holds_its_host_as_a_429_does_and_keeps_its_status() -> None:
    verdict = after_fetch(CLOUDFLARE_403, FIRST, LIMITS, NOW)
    assert verdict.hold_s == LIMITS.throttle_hold_s
    assert isinstance(verdict.decision, Fail)
    assert verdict.decision.outcome.http_status == 403
    assert verdict.decision.outcome.elapsed_ms == 3  # fetched: counted, not charged


def test_a_permanent_http_failure_keeps_its_status_and_time() -> None:
    decision = after_fetch(response(410), FIRST, LIMITS, NOW).decision
    assert isinstance(decision, Fail)
    assert decision.outcome.http_status == 410 and decision.outcome.fetched_at == NOW


def test_retry_after_is_capped() -> None:
    verdict = after_fetch(response(429, **{"retry-after": "9999"}), FIRST, LIMITS, NOW)
    assert verdict.hold_s == LIMITS.retry_after_cap_s


def test_spent_attempts_are_not_fetched_again() -> None:
    limits = OutcomeLimits(2, 5, 50, 10.0, 300.0)
    assert before_fetch(Attempt(2, "HTTP 500", 0), limits) is None
    give_up = before_fetch(Attempt(3, "HTTP 500", 0), limits)
    assert give_up is not None and give_up.outcome.status is TaskStatus.FAILED
    assert give_up.outcome.error == "max_attempts: gave up after 2: HTTP 500"
    assert before_fetch(Attempt(99, None, 0), LIMITS) is None  # no job limit set


def test_a_timeout_of_a_fetch_cut_to_the_deliverys_time_is_deferred_not_blamed() -> None:
    """Near its ack deadline a delivery gives a fetch only the time it has left: a timeout then
    is ours, so the task is deferred (its attempt refunded) and the host's breaker learns
    nothing. A timeout within the job's own timeout stays a transient host failure."""
    timeout = TransientFetchError("timed out", reason="timeout")
    cut = Attempt(attempts=1, previous_error=None, deferrals=0, cut_short=True)
    verdict = after_fetch(timeout, cut, LIMITS, NOW)
    assert isinstance(verdict.decision, Defer)
    assert verdict.decision.reason == "out of time in this delivery"
    assert verdict.host is HostSignal.NONE
    refused = after_fetch(TransientFetchError("refused"), cut, LIMITS, NOW)
    assert isinstance(refused.decision, Retry) and refused.host is HostSignal.FAILED
    assert after_fetch(timeout, FIRST, LIMITS, NOW).host is HostSignal.FAILED


def test_a_busy_renderer_or_a_render_cut_to_the_deliverys_time_is_deferred_not_blamed() -> None:
    busy = after_fetch(RendererBusy("no page free"), FIRST, LIMITS, NOW)
    assert isinstance(busy.decision, Defer) and busy.host is HostSignal.NONE
    assert busy.decision.reason == "render_busy: no page free"
    cut = Attempt(attempts=1, previous_error=None, deferrals=0, cut_short=True)
    timed_out = after_fetch(RenderTimeout("did not settle"), cut, LIMITS, NOW)
    assert isinstance(timed_out.decision, Defer) and timed_out.host is HostSignal.NONE
