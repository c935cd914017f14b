"""What happens to a task after its fetch (or instead of it): one pure decision.

(fetch response or fetch error, the task's attempt, the limits) → Succeed | Fail | Retry |
Defer | GiveUp, plus what the host's politeness state should learn. A response that is a bot
challenge or a login wall (extraction/blocked_pages.py) is no page: it fails with its kind.
This is docs/semantics.md's
failure table; tests/unit/worker/test_outcome_policy.py checks it row by row. The batch
processor only carries decisions out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from scrapejobs_shared.domain.records import TaskOutcome
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.extraction.blocked_pages import Blocked, blocked_page
from scrapejobs_shared.extraction.unusable_pages import Unusable
from scrapejobs_shared.politeness.retry_after import parse_retry_after
from scrapejobs_shared.politeness.status_policy import StatusClass, classify_status
from scrapejobs_shared.ports.fetcher import FetchError, FetchResponse


@dataclass(frozen=True, slots=True)
class Attempt:
    """A task as this delivery runs it."""

    attempts: int  # including this delivery's
    previous_error: str | None
    deferrals: int  # how often its batch was deferred for politeness
    # the fetch got less time than the job allows: only what was left of this delivery
    cut_short: bool = False


@dataclass(frozen=True, slots=True)
class OutcomeLimits:
    max_attempts: int | None  # the job's options.max_attempts
    max_delivery_attempts: int  # the subscription's dead-letter policy
    max_deferrals: int
    throttle_hold_s: float  # host pause after a 429 without Retry-After
    retry_after_cap_s: float


class HostSignal(StrEnum):
    NONE = "none"
    RESPONDED = "responded"  # the host answered: closes its breaker
    FAILED = "failed"  # a host-level failure: counts toward its breaker
    THROTTLED = "throttled"  # the host asked us to slow down: pause it for ``hold_s``


@dataclass(frozen=True, slots=True)
class Succeed:
    """Extract the page (the extractor may still fail it for its content)."""

    response: FetchResponse


@dataclass(frozen=True, slots=True)
class Fail:
    outcome: TaskOutcome


@dataclass(frozen=True, slots=True)
class Retry:
    """Transient: the task stays open with its error; its batch is delivered again."""

    error: str


@dataclass(frozen=True, slots=True)
class Defer:
    """Not this task's fault (throttled, host busy, out of time): the attempt is refunded and
    the batch is published again."""

    reason: str


@dataclass(frozen=True, slots=True)
class GiveUp:
    outcome: TaskOutcome


Decision = Succeed | Fail | Retry | Defer | GiveUp
OUT_OF_TIME = "out of time in this delivery"
CUT_BY_OUR_DEADLINE = frozenset({"timeout", "render_timeout"})


@dataclass(frozen=True, slots=True)
class Ruling:
    """What the policy rules for a fetch: the decision, and what the host's politeness state
    learns from it (a response, a throttle and how long to hold the host)."""

    decision: Decision
    host: HostSignal = HostSignal.NONE
    hold_s: float = 0.0


def before_fetch(attempt: Attempt, limits: OutcomeLimits) -> GiveUp | None:
    """A task whose attempts are already spent is not fetched again."""
    if limits.max_attempts is not None and attempt.attempts > limits.max_attempts:
        return _gave_up(limits.max_attempts, attempt.previous_error)
    return None


def after_fetch(
    result: FetchResponse | FetchError, attempt: Attempt, limits: OutcomeLimits, now: datetime
) -> Ruling:
    if isinstance(result, FetchError):
        if result.reason in CUT_BY_OUR_DEADLINE and attempt.cut_short:
            # our deadline, not the host's fault: neither an attempt nor a breaker failure
            return Ruling(Defer(OUT_OF_TIME))
        if result.reason == "render_busy":  # no browser page free: not an attempt either
            return Ruling(Defer(f"{result.reason}: {result.detail}"))
        error = f"{result.reason}: {result.detail}"
        if not result.transient:
            return Ruling(Fail(TaskOutcome(TaskStatus.FAILED, error=error)))
        signal = HostSignal.FAILED if result.host_fault else HostSignal.NONE
        return Ruling(_transient(error, attempt, limits), signal)
    blocked = blocked_page(result.status, result.headers, result.body, result.url, result.redirects)
    if blocked is not None:
        return _not_the_page(blocked, result, limits, now)
    hold = _throttle_hold(result, limits, now)
    if hold is not None and attempt.deferrals < limits.max_deferrals:
        reason = f"throttled: HTTP {result.status}, retry after {hold:.0f} s"
        return Ruling(Defer(reason), HostSignal.THROTTLED, hold)
    status_class = classify_status(result.status)
    if status_class is StatusClass.TRANSIENT:
        signal = HostSignal.THROTTLED if hold is not None else HostSignal.FAILED
        return Ruling(_transient(f"HTTP {result.status}", attempt, limits), signal, hold or 0.0)
    if status_class is StatusClass.PERMANENT:
        outcome = TaskOutcome(
            TaskStatus.FAILED,
            http_status=result.status,
            error=f"HTTP {result.status}",
            fetched_at=now,
            elapsed_ms=result.elapsed_ms,
        )
        return Ruling(Fail(outcome), HostSignal.RESPONDED)
    return Ruling(Succeed(result), HostSignal.RESPONDED)


def _not_the_page(
    blocked: Blocked, result: FetchResponse, limits: OutcomeLimits, now: datetime
) -> Ruling:
    """A challenge or a login wall answered instead of the page: failed with its kind. A
    challenge holds the host as a 429 without Retry-After does (and counts toward its
    breaker); a login wall is the host answering."""
    outcome = TaskOutcome(
        TaskStatus.FAILED,
        http_status=result.status,
        error=blocked.error,
        fetched_at=now,
        elapsed_ms=result.elapsed_ms,
    )
    if blocked.kind is Unusable.CHALLENGE:
        return Ruling(Fail(outcome), HostSignal.THROTTLED, limits.throttle_hold_s)
    return Ruling(Fail(outcome), HostSignal.RESPONDED)


def _transient(error: str, attempt: Attempt, limits: OutcomeLimits) -> Decision:
    if limits.max_attempts is not None and attempt.attempts >= limits.max_attempts:
        return _gave_up(limits.max_attempts, error)
    if attempt.attempts >= limits.max_delivery_attempts:
        return GiveUp(TaskOutcome(TaskStatus.DEAD_LETTERED, error=error))
    return Retry(error)


def _gave_up(max_attempts: int, error: str | None) -> GiveUp:
    last = error or "unknown error"
    return GiveUp(
        TaskOutcome(TaskStatus.FAILED, error=f"max_attempts: gave up after {max_attempts}: {last}")
    )


def _throttle_hold(response: FetchResponse, limits: OutcomeLimits, now: datetime) -> float | None:
    """A 429, or a 503 with Retry-After: the host asks us to slow down (not a failure)."""
    if response.status not in (429, 503):
        return None
    header = response.headers.get("retry-after")
    delay = parse_retry_after(header, now, limits.retry_after_cap_s)
    if delay is None:
        return None if response.status == 503 else limits.throttle_hold_s
    return delay
