"""The model's answers, kept so that a page is paid for once: the same content, prompt, schema
and model within the cache's lifetime (24 h) reuse the answer, and a redelivered message (its
worker died after the model answered) never asks the model again."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class CachedAnswer:
    value: dict[str, Any]  # the checked answer
    model: str  # the model that gave it


def answer_key(content: str, prompt: str, schema: Mapping[str, Any], model: str) -> str:
    """What an answer is kept under: a digest of everything that decides it."""
    body = json.dumps([content, prompt, schema, model], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(body.encode()).hexdigest()


class AnswerCache(Protocol):
    async def get_many(self, keys: Sequence[str], now: datetime) -> dict[str, CachedAnswer]:
        """The answers kept under ``keys`` and not expired at ``now``, by key (one read of
        them all: a delivery looks up a lane's worth of tasks at once)."""

    async def put(self, key: str, answer: CachedAnswer, expire_at: datetime) -> None: ...
