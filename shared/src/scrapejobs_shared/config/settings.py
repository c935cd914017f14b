"""Settings common to both services (environment variables prefixed ``SCRAPEJOBS_``)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from scrapejobs_shared.messaging.topology import DEFAULT_TOPOLOGY


class CommonSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SCRAPEJOBS_", extra="ignore")

    project_id: str = Field(default="scrapejobs-local", description="Google Cloud project id")
    firestore_database: str = "(default)"
    task_topic: str = DEFAULT_TOPOLOGY.task_topic
    webhook_topic: str = DEFAULT_TOPOLOGY.webhook_topic
    log_level: str = "INFO"
    retention_days: int = Field(default=30, ge=1, le=3650, description="TTL of jobs and results")
