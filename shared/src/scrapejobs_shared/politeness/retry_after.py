"""Reading a ``Retry-After`` response header (RFC 9110 section 10.2.3) as a delay.

The header is either ``delay-seconds`` (a non-negative integer; a decimal such as ``1.5``
is accepted too) or an HTTP-date: the IMF-fixdate (``Sun, 06 Nov 1994 08:49:37 GMT``) or
the obsolete RFC 850 (``Sunday, 06-Nov-94 08:49:37 GMT``) and asctime
(``Sun Nov  6 08:49:37 1994``) forms. A date without a zone is taken as GMT, as HTTP dates
always are. The delay is counted from ``now``, a date in the past gives ``0``, and the
result is capped so a server cannot park a task for days.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

DEFAULT_CAP_S = 300.0

_DELAY_SECONDS = re.compile(r"[0-9]+(?:\.[0-9]+)?")


def parse_retry_after(
    value: str | None, now: datetime, cap_s: float = DEFAULT_CAP_S
) -> float | None:
    """Seconds to wait from ``now``, within ``[0, cap_s]``; ``None`` if absent or invalid."""
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    if _DELAY_SECONDS.fullmatch(text):
        return _clamp(float(text), cap_s)
    when = _http_date(text)
    if when is None:
        return None
    return _clamp((when - _aware(now)).total_seconds(), cap_s)


def _http_date(text: str) -> datetime | None:
    """The instant an HTTP-date names (zone-less dates read as UTC), ``None`` if invalid."""
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return _aware(when)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _clamp(seconds: float, cap_s: float) -> float:
    return max(0.0, min(seconds, cap_s))
