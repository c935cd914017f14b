"""Create the Pub/Sub topics and subscriptions (the same settings Terraform uses)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud import pubsub_v1
from google.protobuf import duration_pb2

from scrapejobs_shared.messaging.topology import (
    DEAD_LETTER_PATH,
    LANES,
    PUSH_PATH,
    WEBHOOK_PATH,
    Topology,
    in_lane,
)

log = logging.getLogger(__name__)


def ensure_topology(
    project_id: str,
    worker_url: str,
    topology: Topology,
    lane_urls: Mapping[str, str] | None = None,
) -> None:
    """Every lane's topics and subscriptions, pushing to the worker unless ``lane_urls`` names
    another service for the lane (the renderer's for the render lane). Idempotent: existing
    topics are kept, existing subscriptions get the current endpoint."""
    publisher = pubsub_v1.PublisherClient()
    subscriber = pubsub_v1.SubscriberClient()
    try:
        for lane in LANES:
            url = (lane_urls or {}).get(lane, worker_url)
            _ensure_lane(publisher, subscriber, project_id, url, topology, lane)
        _ensure_webhooks(publisher, subscriber, project_id, worker_url, topology)
    finally:
        subscriber.close()
        publisher.transport.close()


def _ensure_lane(
    publisher: pubsub_v1.PublisherClient,
    subscriber: pubsub_v1.SubscriberClient,
    project_id: str,
    worker_url: str,
    topology: Topology,
    lane: str,
) -> None:
    """One lane: its task topic, dead-letter topic and their push subscriptions."""
    task_topic = publisher.topic_path(project_id, in_lane(topology.task_topic, lane))
    dead_topic = publisher.topic_path(project_id, in_lane(topology.dead_letter_topic, lane))
    for topic in (task_topic, dead_topic):
        _create_topic(publisher, topic)
    _ensure_subscription(
        subscriber,
        _retried_push(
            subscriber.subscription_path(project_id, in_lane(topology.task_subscription, lane)),
            task_topic,
            worker_url + PUSH_PATH,
            dead_topic,
            topology,
        ),
    )
    _ensure_subscription(
        subscriber,
        {
            "name": subscriber.subscription_path(
                project_id, in_lane(topology.dead_letter_subscription, lane)
            ),
            "topic": dead_topic,
            "push_config": {"push_endpoint": worker_url + DEAD_LETTER_PATH},
            "ack_deadline_seconds": topology.ack_deadline_s,
            "expiration_policy": {},
        },
    )


def _ensure_webhooks(
    publisher: pubsub_v1.PublisherClient,
    subscriber: pubsub_v1.SubscriberClient,
    project_id: str,
    worker_url: str,
    topology: Topology,
) -> None:
    """Webhook events: pushed to the worker with the tasks' retry policy, parked on their
    dead-letter topic after max_delivery_attempts."""
    topic = publisher.topic_path(project_id, topology.webhook_topic)
    dead = publisher.topic_path(project_id, topology.webhook_dead_letter_topic)
    for name in (topic, dead):
        _create_topic(publisher, name)
    _ensure_subscription(
        subscriber,
        _retried_push(
            subscriber.subscription_path(project_id, topology.webhook_subscription),
            topic,
            worker_url + WEBHOOK_PATH,
            dead,
            topology,
        ),
    )


def _retried_push(
    name: str, topic: str, endpoint: str, dead_letter_topic: str, topology: Topology
) -> dict[str, Any]:
    """A push subscription with the topology's retry policy and dead-letter policy."""
    return {
        "name": name,
        "topic": topic,
        "push_config": {"push_endpoint": endpoint},
        "ack_deadline_seconds": topology.ack_deadline_s,
        "retry_policy": {
            "minimum_backoff": duration_pb2.Duration(seconds=topology.min_backoff_s),
            "maximum_backoff": duration_pb2.Duration(seconds=topology.max_backoff_s),
        },
        "dead_letter_policy": {
            "dead_letter_topic": dead_letter_topic,
            "max_delivery_attempts": topology.max_delivery_attempts,
        },
        "expiration_policy": {},
    }


def _create_topic(publisher: pubsub_v1.PublisherClient, topic: str) -> None:
    try:
        publisher.create_topic(request={"name": topic})
        log.info("created topic %s", topic)
    except gexc.AlreadyExists:
        pass


def _ensure_subscription(subscriber: pubsub_v1.SubscriberClient, request: dict[str, Any]) -> None:
    try:
        subscriber.create_subscription(request=request)
        log.info("created subscription %s", request["name"])
    except gexc.AlreadyExists:
        subscriber.modify_push_config(
            request={"subscription": request["name"], "push_config": request["push_config"]}
        )
