"""Pub/Sub topology: names and delivery settings shared by the local bootstrap and Terraform.

Terraform's variable defaults (terraform/variables.tf) must equal these values;
tests/deploy/test_topology_drift.py fails when they drift.
"""

from __future__ import annotations

from dataclasses import dataclass

from scrapejobs_shared.domain.lanes import DEFAULT_LANE

LANE_ATTRIBUTE = "lane"  # the message attribute naming a message's lane (its publisher's topic)

PUSH_PATH = "/pubsub/push"
DEAD_LETTER_PATH = "/pubsub/dead-letter"
WEBHOOK_PATH = "/pubsub/webhook"


@dataclass(frozen=True, slots=True)
class Topology:
    task_topic: str = "scrape-tasks"
    dead_letter_topic: str = "scrape-tasks-dead"
    task_subscription: str = "scrape-tasks-push"
    dead_letter_subscription: str = "scrape-tasks-dead-push"
    # webhook events: pushed to WEBHOOK_PATH with the same retry policy; after
    # max_delivery_attempts Pub/Sub parks them on the dead-letter topic (kept 7 days)
    webhook_topic: str = "scrape-webhooks"
    webhook_subscription: str = "scrape-webhooks-push"
    webhook_dead_letter_topic: str = "scrape-webhooks-dead"
    min_backoff_s: int = 10
    max_backoff_s: int = 600
    max_delivery_attempts: int = 5
    ack_deadline_s: int = 60


def in_lane(name: str, lane: str) -> str:
    """A topic or subscription name of ``lane``: the ``normal`` lane keeps the base names (as
    deployed before lanes), the others add ``-{lane}`` (``scrape-tasks-push-high``)."""
    return name if lane == DEFAULT_LANE else f"{name}-{lane}"


DEFAULT_TOPOLOGY = Topology()
