"""Terraform's messaging defaults must equal the Python topology (single source of truth).

scrapejobs_shared/messaging/topology.py is used by the local bootstrap (emulators) and the
services; terraform/variables.tf must declare one variable per Topology field, named like
the field, whose default equals the Python value. The push endpoints of the subscriptions
must use the paths the worker serves. The `lanes` variable defaults to topology.LANES, and
Terraform names each lane's resources as topology.in_lane does.
"""

from __future__ import annotations

import dataclasses

import pytest

from scrapejobs_shared.domain.lanes import DEFAULT_LANE, LANES
from scrapejobs_shared.messaging import topology
from scrapejobs_shared.messaging.topology import (
    DEAD_LETTER_PATH,
    DEFAULT_TOPOLOGY,
    PUSH_PATH,
    in_lane,
)

TOPOLOGY_FIELDS = [f.name for f in dataclasses.fields(DEFAULT_TOPOLOGY)]


def test_topology_has_the_expected_fields():
    # Guards the parametrisation below against an empty/renamed dataclass.
    assert {
        "task_topic",
        "dead_letter_topic",
        "task_subscription",
        "dead_letter_subscription",
        "min_backoff_s",
        "max_backoff_s",
        "max_delivery_attempts",
        "ack_deadline_s",
    } <= set(TOPOLOGY_FIELDS)


@pytest.mark.parametrize("name", TOPOLOGY_FIELDS)
def test_terraform_variable_default_matches_topology(tf, h, name):
    assert name in tf.variables, (
        f"terraform/variables.tf has no variable {name!r} for Topology.{name}; "
        "every topology setting must be configurable with the Python value as default"
    )
    variable = tf.variables[name]
    assert "default" in variable, f"variable {name!r} has no default"
    expected = getattr(DEFAULT_TOPOLOGY, name)
    actual = variable["default"]
    if isinstance(expected, bool) or not isinstance(expected, int | float):
        assert actual == expected, f"var.{name} default {actual!r} != topology {expected!r}"
        assert h.strip_expr(variable["type"]) == "string"
    else:
        assert actual == expected and type(actual) in (int, float), (
            f"var.{name} default {actual!r} != topology {expected!r}"
        )
        assert h.strip_expr(variable["type"]) == "number"


def test_lanes_variable_default_matches_topology(tf, h):
    variable = tf.variables["lanes"]
    assert variable["default"] == list(LANES)
    assert h.strip_expr(variable["type"]) == "list(string)"
    assert DEFAULT_LANE == "normal"
    conditions = [v["condition"] for v in variable["validation"]]
    assert '${contains(var.lanes,"normal")}' in [h.squash(c) for c in conditions], (
        "the lanes variable must require the normal (default) lane"
    )


def test_lane_names_follow_in_lane_as_parsed(tf, h):
    """The HCL rule, read literally: the normal lane keeps the base name, others add -lane."""
    assert h.squash(tf.locals["lane_suffix"]) == h.squash(
        '${{for lane in var.lanes : lane => lane == "normal" ? "" : "-${lane}"}}'
    )
    names = h.squash(tf.locals["lane_names"])
    for name in (
        "task_topic",
        "dead_letter_topic",
        "task_subscription",
        "dead_letter_subscription",
    ):
        assert f'"{name}":"${{var.{name}}}${{local.lane_suffix[lane]}}"' in names, name
    for lane in LANES:
        suffix = "" if lane == "normal" else f"-{lane}"
        assert in_lane("base", lane) == f"base{suffix}"


def test_lane_names_evaluate_to_in_lane(tf_eval):
    names = tf_eval("local.lane_names")
    assert set(names) == set(LANES)
    for lane in LANES:
        for name in (
            "task_topic",
            "dead_letter_topic",
            "task_subscription",
            "dead_letter_subscription",
        ):
            expected = in_lane(getattr(DEFAULT_TOPOLOGY, name), lane)
            assert names[lane][name] == expected, (lane, name)
    assert names["normal"]["task_topic"] == DEFAULT_TOPOLOGY.task_topic


def test_resources_use_the_topology_variables(tf, h):
    tasks = tf.resource("google_pubsub_topic", "tasks")
    dead = tf.resource("google_pubsub_topic", "dead_letter")
    task_sub = tf.resource("google_pubsub_subscription", "tasks")
    dead_sub = tf.resource("google_pubsub_subscription", "dead_letter")

    for body in (tasks, dead, task_sub, dead_sub):
        assert body["for_each"] == "${local.lanes}"
    assert tf.locals["lanes"] == "${toset(var.lanes)}"
    assert tasks["name"] == "${local.lane_names[each.key].task_topic}"
    assert dead["name"] == "${local.lane_names[each.key].dead_letter_topic}"
    assert task_sub["name"] == "${local.lane_names[each.key].task_subscription}"
    assert dead_sub["name"] == "${local.lane_names[each.key].dead_letter_subscription}"
    assert task_sub["ack_deadline_seconds"] == "${var.ack_deadline_s}"
    assert dead_sub["ack_deadline_seconds"] == "${var.ack_deadline_s}"

    retry = h.block(task_sub, "retry_policy")
    assert retry["minimum_backoff"] == "${var.min_backoff_s}s"
    assert retry["maximum_backoff"] == "${var.max_backoff_s}s"
    policy = h.block(task_sub, "dead_letter_policy")
    assert policy["max_delivery_attempts"] == "${var.max_delivery_attempts}"


def test_services_get_the_task_topic_from_the_same_variable(tf, h):
    common_env = h.as_map(tf.locals["common_env"])
    assert common_env["SCRAPEJOBS_TASK_TOPIC"] == "${var.task_topic}"


@pytest.mark.parametrize(
    ("subscription", "path"),
    [("tasks", PUSH_PATH), ("dead_letter", DEAD_LETTER_PATH)],
)
def test_push_endpoint_path_matches_topology(tf, h, subscription, path):
    body = tf.resource("google_pubsub_subscription", subscription)
    endpoint = h.block(body, "push_config")["push_endpoint"]
    worker_uri = "${google_cloud_run_v2_service.worker[local.lane_worker[each.key]].uri}"
    assert endpoint == worker_uri + path, (
        f"{subscription} subscription pushes to {endpoint!r}; topology.py says the worker "
        f"serves {path!r}"
    )


def test_paths_are_distinct_absolute_paths():
    assert topology.PUSH_PATH.startswith("/")
    assert topology.DEAD_LETTER_PATH.startswith("/")
    assert topology.PUSH_PATH != topology.DEAD_LETTER_PATH
