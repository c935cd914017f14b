"""A browser page's size in CSS pixels: a rendered job's (``options.render.viewport``) and a
screenshot action's own."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from scrapejobs_shared.extraction.field_types import JSON_INT


class Viewport(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    width: Annotated[int, Field(ge=320, le=3840), JSON_INT] = 1280
    height: Annotated[int, Field(ge=240, le=2160), JSON_INT] = 800
