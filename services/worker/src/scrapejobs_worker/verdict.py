"""What the push endpoint answers Pub/Sub: ack (2xx) or retry (non-2xx, Pub/Sub backs off)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Verdict:
    ack: bool
    reason: str
    retry_after_s: float | None = None

    @classmethod
    def done(cls, reason: str) -> Verdict:
        return cls(True, reason)

    @classmethod
    def retry(cls, reason: str, retry_after_s: float | None = None) -> Verdict:
        return cls(False, reason, retry_after_s)
