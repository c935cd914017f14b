"""What a job's ``ai`` stage cost: the provider's own usage figures, counted once per finished
task (in the commit that finishes it), and the answers reused instead of asked for."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

PREFIX = "ai_"  # counter shard fields: ai_calls, ai_cached, ai_input_tokens, ai_output_tokens


@dataclass(frozen=True, slots=True)
class ModelUsage:
    calls: int = 0  # requests the provider answered (a repair is one more)
    cached: int = 0  # answers reused from the cache (no request)
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: ModelUsage) -> ModelUsage:
        return ModelUsage(
            self.calls + other.calls,
            self.cached + other.cached,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
        )

    @property
    def empty(self) -> bool:
        return not (self.calls or self.cached or self.input_tokens or self.output_tokens)

    def to_fields(self) -> dict[str, int]:
        """The nonzero figures as counter fields."""
        return {
            PREFIX + f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name)
        }

    @classmethod
    def from_fields(cls, doc: Mapping[str, Any]) -> ModelUsage:
        return cls(**{f.name: int(doc.get(PREFIX + f.name) or 0) for f in fields(cls)})


FIELD_NAMES = tuple(PREFIX + f.name for f in fields(ModelUsage))


@dataclass(frozen=True, slots=True)
class ModelPrices:
    """What a million tokens cost, in and out (``SCRAPEJOBS_AI_PRICE_PER_MTOK_IN/OUT``, in the
    currency the operator bills in); a price not set counts as free."""

    per_mtok_in: float = 0.0
    per_mtok_out: float = 0.0

    def cost_of(self, usage: ModelUsage) -> float:
        """The cost of ``usage``, to a millionth (reused answers cost nothing)."""
        cost = usage.input_tokens * self.per_mtok_in + usage.output_tokens * self.per_mtok_out
        return round(cost / 1_000_000, 6)
