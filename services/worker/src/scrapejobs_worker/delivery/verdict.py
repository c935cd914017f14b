"""What the push endpoint answers Pub/Sub: ack (2xx) or retry (non-2xx, Pub/Sub backs off)."""

from __future__ import annotations

from dataclasses import dataclass

OTHER = "_OTHER"


@dataclass(frozen=True, slots=True)
class Verdict:
    ack: bool
    reason: str
    error_type: str | None = None  # a nack's short code, for metrics (``error.type``)

    @classmethod
    def done(cls, reason: str) -> Verdict:
        return cls(True, reason)

    @classmethod
    def retry(cls, reason: str, error_type: str = OTHER) -> Verdict:
        return cls(False, reason, error_type)
