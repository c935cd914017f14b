"""A provider's ``Retry-After`` (or OpenAI's ``retry-after-ms``) header, in seconds."""

from __future__ import annotations

from collections.abc import Mapping


def retry_after_s(headers: Mapping[str, str] | None) -> float | None:
    """Seconds the provider asked us to wait (delay-seconds only; None when it did not say)."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    try:
        if millis is not None:
            return max(0.0, float(millis) / 1000)
        seconds = headers.get("retry-after")
        return max(0.0, float(seconds)) if seconds is not None else None
    except ValueError:
        return None
