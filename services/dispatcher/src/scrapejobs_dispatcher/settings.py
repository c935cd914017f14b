"""Dispatcher settings, read once from the environment by the process entrypoint."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from scrapejobs_dispatcher.body_limit import DEFAULT_MAX_BODY_BYTES
from scrapejobs_shared.config.settings import CommonSettings


class DispatcherSettings(CommonSettings):
    auth_mode: Literal["iam", "api_key", "none"] = Field(
        default="iam",
        description="iam: Cloud Run IAM checks Google identity tokens at the edge; api_key: "
        "X-API-Key checked against api_key_hashes; none: local development only",
    )
    api_key_hashes: str = Field(default="", description="Comma-separated SHA-256 hex digests")
    max_body_bytes: int = Field(
        default=DEFAULT_MAX_BODY_BYTES, ge=1024, description="Larger request bodies get 413"
    )
