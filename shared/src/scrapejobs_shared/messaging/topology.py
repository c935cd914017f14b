"""Pub/Sub topology: names and delivery settings shared by the local bootstrap and Terraform.

Terraform's variable defaults (terraform/variables.tf) must equal these values;
tests/deploy/test_topology_drift.py fails when they drift.
"""

from __future__ import annotations

from dataclasses import dataclass

PUSH_PATH = "/pubsub/push"
DEAD_LETTER_PATH = "/pubsub/dead-letter"


@dataclass(frozen=True, slots=True)
class Topology:
    task_topic: str = "scrape-tasks"
    dead_letter_topic: str = "scrape-tasks-dead"
    task_subscription: str = "scrape-tasks-push"
    dead_letter_subscription: str = "scrape-tasks-dead-push"
    min_backoff_s: int = 10
    max_backoff_s: int = 600
    max_delivery_attempts: int = 5
    ack_deadline_s: int = 60


DEFAULT_TOPOLOGY = Topology()
