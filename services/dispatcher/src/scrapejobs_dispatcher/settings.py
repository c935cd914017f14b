"""Dispatcher settings, read once from the environment by the process entrypoint."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from scrapejobs_dispatcher.body_limit import DEFAULT_MAX_BODY_BYTES
from scrapejobs_shared.config.settings import CommonSettings
from scrapejobs_shared.delivery.batching import DEFAULT_BATCH_SIZE
from scrapejobs_shared.messaging.task_message import MAX_BATCH_SIZE
from scrapejobs_shared.messaging.topology import DEFAULT_TOPOLOGY


class DispatcherSettings(CommonSettings):
    auth_mode: Literal["iam", "api_key", "none"] = Field(
        default="iam",
        description="iam: Cloud Run IAM checks Google identity tokens at the edge; api_key: "
        "X-API-Key checked against api_key_hashes; none: local development only",
    )
    api_key_hashes: str = Field(default="", description="Comma-separated SHA-256 hex digests")
    batch_size: int = Field(
        default=DEFAULT_BATCH_SIZE,
        ge=1,
        le=MAX_BATCH_SIZE,
        description="URLs per task message (grouped by host); see bench/README.md",
    )
    reconcile_after_s: int = Field(
        default=DEFAULT_TOPOLOGY.max_backoff_s + DEFAULT_TOPOLOGY.ack_deadline_s + 30,
        ge=1,
        description="A batch with open tasks that nothing wrote for this long, and no delivery "
        "holds, is published again by POST /v1/maintenance/reconcile: longer than a healthy "
        "batch can go without a write (a nacked batch waits up to max_backoff_s for its "
        "redelivery, which answers within ack_deadline_s)",
    )
    idempotency_key_ttl_s: int = Field(
        default=24 * 3600, ge=60, description="How long an Idempotency-Key is remembered"
    )
    max_body_bytes: int = Field(
        default=DEFAULT_MAX_BODY_BYTES, ge=1024, description="Larger request bodies get 413"
    )
