"""When to try a request again and how long to wait first (pure: no I/O, no clock of its own).

An answer of 429 or 503 is tried again after the server's ``Retry-After`` (seconds or an HTTP
date) when it sends one, otherwise after an exponential backoff with jitter
(``base * 2**attempt``, capped, times a factor in [0.5, 1]); so is a connection that failed or
timed out. A ``Retry-After`` longer than ``max_retry_after_s`` is not waited for: the error is
raised at once, since the server said it will not be ready within a wait a caller expects.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

RETRY_STATUSES = frozenset({429, 503})


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5
    """Tries in all (1: never retry)."""
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    max_retry_after_s: float = 120.0
    statuses: frozenset[int] = RETRY_STATUSES
    jitter: Callable[[], float] = field(default=random.random, compare=False)
    """A number in [0, 1); the backoff is scaled by ``0.5 + jitter() / 2``."""

    def backoff(self, attempt: int) -> float:
        """Delay before try ``attempt + 1`` (``attempt`` counts from 0) with no Retry-After."""
        delay = min(self.max_delay_s, self.base_delay_s * 2.0**attempt)
        return delay * (0.5 + self.jitter() / 2)

    def delay_after(
        self, attempt: int, response: httpx.Response | None, now: datetime | None = None
    ) -> float | None:
        """Seconds to wait before trying again after try ``attempt`` (from 0) got ``response``
        (None: no answer, the connection failed); None when not to try again."""
        if attempt + 1 >= self.attempts:
            return None
        if response is None:
            return self.backoff(attempt)
        if response.status_code not in self.statuses:
            return None
        retry_after = retry_after_seconds(response.headers.get("retry-after"), now)
        if retry_after is None:
            return self.backoff(attempt)
        if retry_after > self.max_retry_after_s:
            return None
        return retry_after


NO_RETRIES = RetryPolicy(attempts=1)


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """``Retry-After`` in seconds from now (RFC 9110: delay-seconds or an HTTP date); None
    when absent or unreadable. A date in the past is 0. (The worker has its own reading, capped
    for politeness; this package installs without the server's.)"""
    if value is None or not value.strip():
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
