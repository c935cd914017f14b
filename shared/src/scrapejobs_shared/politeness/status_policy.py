"""Which HTTP statuses are worth retrying."""

from __future__ import annotations

from enum import StrEnum

TRANSIENT_CLIENT_ERRORS = frozenset({408, 425, 429})


class StatusClass(StrEnum):
    OK = "ok"
    TRANSIENT = "transient"
    PERMANENT = "permanent"


def classify_status(status: int) -> StatusClass:
    if 200 <= status < 300:
        return StatusClass.OK
    if status >= 500 or status in TRANSIENT_CLIENT_ERRORS:
        return StatusClass.TRANSIENT
    return StatusClass.PERMANENT
