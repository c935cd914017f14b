"""Create the Pub/Sub topics and subscriptions on the emulator: Terraform's settings, except
the retry policy.

The emulator (cloud-pubsub-emulator 0.8.20) implements a retry policy with a queue of delayed
messages that one scheduled task per subscription releases; that task dies, silently and for
the subscription's lifetime, on the first delayed message it cannot find again (a redelivered
push answered just after its ack deadline; two failed pushes given the same release time).
From then on every message of that subscription nacked a second time is never delivered
again, nor dead-lettered. Measured (loopback, ack deadline 10 s, backoff 1-2 s): a message
whose second push was acknowledged after 11.2 s left the next message of the subscription at
2 deliveries for good; of 50 messages published while the endpoint refused connections for
4 s, 19 (in another run none) ever arrived, and none was dead-lettered. Without a retry policy
the emulator puts a failed push back 1 s later by the path every pull takes: all 50 arrived,
and the next message had its 5 deliveries, then the dead-letter topic
(tests/integration/test_emulator_redelivery.py). So the local
stack's subscriptions have none: a failure is retried after 1 s, not with Pub/Sub's
exponential backoff (Terraform keeps min_backoff_s and max_backoff_s)."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Mapping
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud import pubsub_v1

from scrapejobs_shared.domain.lanes import LANES
from scrapejobs_shared.messaging.topology import (
    DEAD_LETTER_PATH,
    DEFAULT_TOPOLOGY,
    PUSH_PATH,
    WEBHOOK_PATH,
    Topology,
    in_lane,
)

log = logging.getLogger(__name__)

# What the emulator's subscriptions do with a failed push: put it back 1 s later.
EMULATOR_TOPOLOGY = dataclasses.replace(DEFAULT_TOPOLOGY, min_backoff_s=1, max_backoff_s=1)


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


def remove_topology(project_id: str) -> None:
    """Delete every subscription and topic of ``project_id``: a stack that stops for good
    (a test's stack of its own) leaves nothing the emulator would go on pushing to a port
    nobody listens on. The emulator retries such pushes of a dead-letter subscription without
    end, and that stream delays the other subscriptions' redeliveries."""
    publisher = pubsub_v1.PublisherClient()
    subscriber = pubsub_v1.SubscriberClient()
    project = f"projects/{project_id}"
    try:
        for subscription in subscriber.list_subscriptions(request={"project": project}):
            with contextlib.suppress(gexc.NotFound):
                subscriber.delete_subscription(request={"subscription": subscription.name})
        for topic in publisher.list_topics(request={"project": project}):
            with contextlib.suppress(gexc.NotFound):
                publisher.delete_topic(request={"topic": topic.name})
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
        _dead_lettered_push(
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
    """Webhook events: pushed to the worker and retried as the tasks are, parked on their
    dead-letter topic after max_delivery_attempts."""
    topic = publisher.topic_path(project_id, topology.webhook_topic)
    dead = publisher.topic_path(project_id, topology.webhook_dead_letter_topic)
    for name in (topic, dead):
        _create_topic(publisher, name)
    _ensure_subscription(
        subscriber,
        _dead_lettered_push(
            subscriber.subscription_path(project_id, topology.webhook_subscription),
            topic,
            worker_url + WEBHOOK_PATH,
            dead,
            topology,
        ),
    )


def _dead_lettered_push(
    name: str, topic: str, endpoint: str, dead_letter_topic: str, topology: Topology
) -> dict[str, Any]:
    """A push subscription with the topology's dead-letter policy and no retry policy (see
    the module's docstring)."""
    return {
        "name": name,
        "topic": topic,
        "push_config": {"push_endpoint": endpoint},
        "ack_deadline_seconds": topology.ack_deadline_s,
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
