"""The port through which the worker's service logic asks a language model.

Service logic (``ai_answers.py``) depends on this module only; the providers' adapters, which
speak their protocols through their own SDKs, live in ``language_models/``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from scrapejobs_shared.errors import Unavailable, WorkFailed

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One request: the ``system`` message is the instruction, the ``user`` messages carry
    the content as data; the answer must be a JSON object of ``schema`` (the provider's
    structured-output format)."""

    model: str
    messages: Sequence[Message]
    schema: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ModelReply:
    text: str
    model: str  # the model that answered, as the provider names it
    input_tokens: int  # the provider's own usage figures
    output_tokens: int


class ModelBusy(Unavailable):
    """The provider could not answer now (429, 5xx, a timeout, no connection): try again,
    after ``retry_after_s`` when it said so."""

    def __init__(self, reason: str, retry_after_s: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after_s = retry_after_s


class ModelRefused(WorkFailed):
    """The provider refused the request itself (a bad request, an unknown model, no access):
    asking again will not help."""


class LanguageModel(Protocol):
    provider: str  # "openai" or "vertex"

    async def reply(self, call: ModelCall) -> ModelReply:
        """The model's answer, or ``ModelBusy`` / ``ModelRefused``."""

    async def aclose(self) -> None: ...
