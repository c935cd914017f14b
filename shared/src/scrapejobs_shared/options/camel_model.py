"""The base of Firecrawl's request bodies: camelCase fields, nothing unknown, no coercion."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class CamelModel(BaseModel):
    model_config = ConfigDict(
        extra="forbid", alias_generator=to_camel, populate_by_name=False, strict=True
    )
