"""Priority lanes in Terraform: one topic/subscription set per lane, IAM and alerts for every
lane, optional dedicated worker services, and moved blocks that adopt the pre-lanes resources.

Expressions are checked as parsed (no provider offline); the locals of terraform/lanes.tf only
reference variables, so `terraform console` also evaluates them (``tf_eval``).
"""

from __future__ import annotations

import pytest

from scrapejobs_shared.domain.lanes import LANES

PUBSUB = [
    ("google_pubsub_topic", "tasks"),
    ("google_pubsub_topic", "dead_letter"),
    ("google_pubsub_subscription", "tasks"),
    ("google_pubsub_subscription", "dead_letter"),
]

# Pre-lanes single resources and the instance that adopts each one (no destroy/create).
ADOPTED = {
    "google_pubsub_topic.tasks": 'google_pubsub_topic.tasks["normal"]',
    "google_pubsub_topic.dead_letter": 'google_pubsub_topic.dead_letter["normal"]',
    "google_pubsub_subscription.tasks": 'google_pubsub_subscription.tasks["normal"]',
    "google_pubsub_subscription.dead_letter": 'google_pubsub_subscription.dead_letter["normal"]',
    "google_pubsub_topic_iam_member.dispatcher_publishes_tasks": (
        'google_pubsub_topic_iam_member.dispatcher_publishes_tasks["normal"]'
    ),
    "google_pubsub_topic_iam_member.dispatcher_views_tasks_topic": (
        'google_pubsub_topic_iam_member.dispatcher_views_tasks_topic["normal"]'
    ),
    "google_pubsub_topic_iam_member.worker_publishes_tasks": (
        'google_pubsub_topic_iam_member.worker_publishes_tasks["normal"]'
    ),
    "google_pubsub_topic_iam_member.pubsub_agent_publishes_dead_letters": (
        'google_pubsub_topic_iam_member.pubsub_agent_publishes_dead_letters["normal"]'
    ),
    "google_pubsub_subscription_iam_member.pubsub_agent_subscribes_tasks": (
        'google_pubsub_subscription_iam_member.pubsub_agent_subscribes_tasks["normal"]'
    ),
    "google_cloud_run_v2_service.worker": 'google_cloud_run_v2_service.worker["shared"]',
    "google_cloud_run_v2_service_iam_member.push_invoker_invokes_worker": (
        'google_cloud_run_v2_service_iam_member.push_invoker_invokes_worker["shared"]'
    ),
    "google_cloud_run_v2_service_iam_member.build_deploys_worker[0]": (
        'google_cloud_run_v2_service_iam_member.build_deploys_worker["shared"]'
    ),
}


# --- one set of Pub/Sub resources per lane ------------------------------------------------


@pytest.mark.parametrize(("rtype", "name"), PUBSUB)
def test_pubsub_resources_exist_once_per_lane(tf, rtype, name):
    body = tf.resource(rtype, name)
    assert body["for_each"] == "${local.lanes}"
    assert body["name"] == f"${{local.lane_names[each.key].{_name_field(rtype, name)}}}"


def _name_field(rtype: str, name: str) -> str:
    kind = "topic" if rtype == "google_pubsub_topic" else "subscription"
    return f"{'task' if name == 'tasks' else 'dead_letter'}_{kind}"


@pytest.mark.parametrize("name", ["tasks", "dead_letter"])
def test_each_lane_subscription_reads_its_own_lane_topic(tf, h, name):
    body = tf.resource("google_pubsub_subscription", name)
    assert body["topic"] == f"${{google_pubsub_topic.{name}[each.key].id}}"
    # Same delivery settings in every lane.
    assert body["ack_deadline_seconds"] == "${var.ack_deadline_s}"
    retry = h.block(body, "retry_policy")
    assert retry == {
        "minimum_backoff": "${var.min_backoff_s}s",
        "maximum_backoff": "${var.max_backoff_s}s",
    }
    assert h.block(body, "expiration_policy")["ttl"] == ""


def test_each_lane_dead_letters_into_its_own_dead_letter_topic(tf, h):
    policy = h.block(tf.resource("google_pubsub_subscription", "tasks"), "dead_letter_policy")
    assert policy == {
        "dead_letter_topic": "${google_pubsub_topic.dead_letter[each.key].id}",
        "max_delivery_attempts": "${var.max_delivery_attempts}",
    }


def test_lanes_default_names(tf_eval):
    names = tf_eval("local.lane_names")
    assert names == {
        "high": {
            "task_topic": "scrape-tasks-high",
            "dead_letter_topic": "scrape-tasks-dead-high",
            "task_subscription": "scrape-tasks-push-high",
            "dead_letter_subscription": "scrape-tasks-dead-push-high",
        },
        "normal": {
            "task_topic": "scrape-tasks",
            "dead_letter_topic": "scrape-tasks-dead",
            "task_subscription": "scrape-tasks-push",
            "dead_letter_subscription": "scrape-tasks-dead-push",
        },
        "low": {
            "task_topic": "scrape-tasks-low",
            "dead_letter_topic": "scrape-tasks-dead-low",
            "task_subscription": "scrape-tasks-push-low",
            "dead_letter_subscription": "scrape-tasks-dead-push-low",
        },
        "render": {
            "task_topic": "scrape-tasks-render",
            "dead_letter_topic": "scrape-tasks-dead-render",
            "task_subscription": "scrape-tasks-push-render",
            "dead_letter_subscription": "scrape-tasks-dead-push-render",
        },
        "processing": {
            "task_topic": "scrape-tasks-processing",
            "dead_letter_topic": "scrape-tasks-dead-processing",
            "task_subscription": "scrape-tasks-push-processing",
            "dead_letter_subscription": "scrape-tasks-dead-push-processing",
        },
        "documents": {
            "task_topic": "scrape-tasks-documents",
            "dead_letter_topic": "scrape-tasks-dead-documents",
            "task_subscription": "scrape-tasks-push-documents",
            "dead_letter_subscription": "scrape-tasks-dead-push-documents",
        },
    }
    assert tf_eval("local.lanes") == sorted(LANES)  # a set: every lane, once


def test_lane_names_follow_renamed_base_variables(tf_eval):
    names = tf_eval("local.lane_names", task_topic="jobs", lanes=["normal", "urgent", "render"])
    assert names["normal"]["task_topic"] == "jobs"
    assert names["urgent"]["task_topic"] == "jobs-urgent"


def test_lanes_variable_rejects_a_configuration_without_normal(tf, h):
    conditions = [h.squash(v["condition"]) for v in tf.variables["lanes"]["validation"]]
    assert '${contains(var.lanes,"normal")}' in conditions
    # "shared" names the shared worker service in local.worker_services.
    assert '${!contains(var.lanes,"shared")}' in conditions
    # rendered jobs are published to the render lane, whatever the deployment's lanes
    assert '${contains(var.lanes,"render")}' in conditions


# --- IAM and alerts for every lane ------------------------------------------------------------


@pytest.mark.parametrize(
    ("rtype", "name", "over"),
    [
        (
            "google_pubsub_topic_iam_member",
            "dispatcher_publishes_tasks",
            "google_pubsub_topic.tasks",
        ),
        (
            "google_pubsub_topic_iam_member",
            "dispatcher_views_tasks_topic",
            "google_pubsub_topic.tasks",
        ),
        ("google_pubsub_topic_iam_member", "worker_publishes_tasks", "google_pubsub_topic.tasks"),
        (
            "google_pubsub_topic_iam_member",
            "pubsub_agent_publishes_dead_letters",
            "google_pubsub_topic.dead_letter",
        ),
        (
            "google_pubsub_subscription_iam_member",
            "pubsub_agent_subscribes_tasks",
            "google_pubsub_subscription.tasks",
        ),
    ],
)
def test_pubsub_grants_cover_every_lane(tf, rtype, name, over):
    body = tf.resource(rtype, name)
    assert body["for_each"] == f"${{{over}}}"
    target = body.get("topic", body.get("subscription"))
    assert target == "${each.value.name}"


def test_legacy_outputs_point_at_the_normal_lane_and_maps_cover_every_lane(tf):
    for output, ref in (
        ("task_topic", 'google_pubsub_topic.tasks["normal"].name'),
        ("dead_letter_topic", 'google_pubsub_topic.dead_letter["normal"].name'),
        ("task_subscription", 'google_pubsub_subscription.tasks["normal"].name'),
        ("dead_letter_subscription", 'google_pubsub_subscription.dead_letter["normal"].name'),
        ("worker_url", 'google_cloud_run_v2_service.worker["shared"].uri'),
        ("worker_service_name", 'google_cloud_run_v2_service.worker["shared"].name'),
    ):
        assert tf.outputs[output]["value"] == f"${{{ref}}}", output
    for output, resource in (
        ("lane_task_topics", "google_pubsub_topic.tasks"),
        ("lane_dead_letter_topics", "google_pubsub_topic.dead_letter"),
        ("lane_task_subscriptions", "google_pubsub_subscription.tasks"),
        ("lane_dead_letter_subscriptions", "google_pubsub_subscription.dead_letter"),
        ("worker_service_names", "google_cloud_run_v2_service.worker"),
    ):
        assert f" in {resource} :" in tf.outputs[output]["value"], output
    assert "local.lane_worker" in tf.outputs["lane_worker_services"]["value"]


# --- moved blocks: the single pre-lanes resources become the normal lane / shared worker ------


def test_moved_blocks_adopt_the_pre_lanes_resources(tf):
    assert {k: tf.moved.get(k) for k in ADOPTED} == ADOPTED


def test_moved_targets_are_declared_resources(tf):
    for target in tf.moved.values():
        rtype, rest = target.split(".", 1)
        name = rest.split("[", 1)[0]
        body = tf.resource(rtype, name)
        assert "for_each" in body, f"{target}: the target resource is not keyed"


# --- dedicated lane workers ------------------------------------------------------------------


RENDERER = {
    "name": "scrapejobs-renderer",
    "min_instances": 0,
    "max_instances": 5,
    "role": "renderer",
    "cpu": None,
    "memory": None,
}


def test_default_is_one_shared_worker_for_every_priority_and_the_renderer(tf, h, tf_eval):
    assert h.as_map(tf.variables["dedicated_lane_workers"]["default"]) == {}
    assert tf_eval("local.worker_services") == {
        "shared": {
            "name": "scrapejobs-worker",
            "min_instances": 0,
            "max_instances": 10,
            "role": "worker",
            "cpu": None,
            "memory": None,
        },
        "render": RENDERER,
    }
    assert tf_eval("local.lane_worker") == {
        **dict.fromkeys(("high", "normal", "low", "processing", "documents"), "shared"),
        "render": "render",
    }


def test_a_dedicated_lane_gets_its_own_worker_service(tf_eval):
    dedicated = {"high": {"max_instances": 4, "min_instances": 1}}
    services = tf_eval(
        "local.worker_services", dedicated_lane_workers=dedicated, worker_max_instances=20
    )
    assert services == {
        "shared": {
            "name": "scrapejobs-worker",
            "min_instances": 0,
            "max_instances": 20,
            "role": "worker",
            "cpu": None,
            "memory": None,
        },
        "high": {
            "name": "scrapejobs-worker-high",
            "min_instances": 1,
            "max_instances": 4,
            "role": "worker",
            "cpu": None,
            "memory": None,
        },
        "render": RENDERER,
    }
    assert tf_eval("local.lane_worker", dedicated_lane_workers=dedicated) == {
        "high": "high",
        "normal": "shared",
        "low": "shared",
        "render": "render",
        "processing": "shared",
        "documents": "shared",
    }
    # a lane's worker may have a size of its own (the documents lane's, memory for its reads)
    documents = {"documents": {"max_instances": 3, "memory": "4Gi"}}
    sized = tf_eval("local.worker_services", dedicated_lane_workers=documents)["documents"]
    assert sized["memory"] == "4Gi" and sized["cpu"] is None
    # min_instances is optional (scale to zero).
    low_only = tf_eval(
        "local.worker_services", dedicated_lane_workers={"low": {"max_instances": 2}}
    )
    assert low_only["low"] == {
        "name": "scrapejobs-worker-low",
        "min_instances": 0,
        "max_instances": 2,
        "role": "worker",
        "cpu": None,
        "memory": None,
    }


@pytest.mark.parametrize(
    ("name", "path"), [("tasks", "/pubsub/push"), ("dead_letter", "/pubsub/dead-letter")]
)
def test_lane_subscriptions_push_to_their_lanes_worker(tf, h, name, path):
    push = h.block(tf.resource("google_pubsub_subscription", name), "push_config")
    assert push["push_endpoint"] == (
        "${google_cloud_run_v2_service.worker[local.lane_worker[each.key]].uri}" + path
    )
    oidc = h.block(push, "oidc_token")
    assert oidc["audience"] == "${local.worker_audiences[local.lane_worker[each.key]]}"
    assert oidc["service_account_email"] == "${google_service_account.push_invoker.email}"


def test_every_worker_service_is_the_same_worker(tf, h):
    """One resource for the shared and the dedicated workers and the renderer: same code and
    env; a service's role picks its image, size, the renderer's browser and its own, lesser
    identity (tests/deploy/test_terraform_wiring.py, the renderer's privileges)."""
    workers = tf.of_type("google_cloud_run_v2_service")
    assert set(workers) == {"dispatcher", "worker", "searxng"}  # searxng: search.tf, no worker
    worker = workers["worker"]
    assert worker["for_each"] == "${local.worker_services}"
    template = h.block(worker, "template")
    assert h.squash(template["service_account"]) == h.squash(
        '${each.value.role == "renderer" ? google_service_account.renderer.email'
        " : google_service_account.worker.email}"
    )
    container = h.block(template, "containers")
    assert container["image"] == "${local.worker_roles[each.value.role].image}"
    roles = h.as_map(tf.locals["worker_roles"])
    assert set(roles) == {"worker", "renderer"}
    assert roles["worker"]["image"] == "${var.worker_image}"
    assert roles["worker"]["env"] == {}
    assert roles["renderer"]["image"] == "${var.renderer_image}"
    renderer_env = h.as_map(roles["renderer"]["env"])
    assert renderer_env["SCRAPEJOBS_RENDER_BROWSER_PATH"] == "/usr/bin/chromium-headless-shell"
    assert renderer_env["SCRAPEJOBS_RENDER_MAX_PAGES"] == "${tostring(var.renderer_pages)}"
    from scrapejobs_worker.settings import WorkerSettings

    pages = WorkerSettings.model_fields["render_max_pages"].default
    assert tf.variables["renderer_pages"]["default"] == pages
    assert h.squash(tf.locals["worker_services"]).startswith('${merge({"shared":')
    conditions = [h.squash(p["condition"]) for p in worker["lifecycle"][0]["precondition"]]
    assert (
        h.squash(
            "${alltrue([for lane in keys(var.dedicated_lane_workers) : contains(var.lanes,lane)])}"
        )
        in conditions
    ), "a dedicated worker must serve a declared lane"


def test_push_invoker_and_deployer_reach_every_worker_service(tf, h):
    invoker = tf.resource("google_cloud_run_v2_service_iam_member", "push_invoker_invokes_worker")
    assert invoker["for_each"] == "${google_cloud_run_v2_service.worker}"
    assert invoker["role"] == "roles/run.invoker"
    deployer = tf.resource("google_cloud_run_v2_service_iam_member", "build_deploys_worker")
    assert h.squash(deployer["for_each"]) == h.squash(
        "${{for key, worker in google_cloud_run_v2_service.worker : "
        "key => worker if var.create_build_service_account}}"
    )
    assert deployer["role"] == "roles/run.developer"
