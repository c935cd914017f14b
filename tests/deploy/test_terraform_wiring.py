"""Static checks of terraform/*.tf: how the pieces are wired together and IAM hygiene.

`terraform validate/plan` need the Google provider (network); these tests parse the HCL
and assert the invariants the system depends on.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

# A lane's subscriptions push to the worker service of that lane (local.lane_worker: the
# shared worker unless the lane has a dedicated one), with that service's audience.
WORKER_URI = "${google_cloud_run_v2_service.worker[local.lane_worker[each.key]].uri}"
WORKER_AUDIENCE = "${local.worker_audiences[local.lane_worker[each.key]]}"
WORKERS = "${google_cloud_run_v2_service.worker}"
DISPATCHER_URI = "${google_cloud_run_v2_service.dispatcher.uri}"
PUSH_INVOKER_EMAIL = "${google_service_account.push_invoker.email}"
SCHEDULER_EMAIL = "${google_service_account.scheduler.email}"
PUBSUB_AGENT = "${local.pubsub_service_agent}"
PUBLIC_MEMBERS = {"allUsers", "allAuthenticatedUsers"}
BASIC_ROLES = {"roles/owner", "roles/editor", "roles/viewer"}

EXPECTED_FILES = {
    "versions.tf",
    "providers.tf",
    "backend.tf",
    "variables.tf",
    "outputs.tf",
    "apis.tf",
    "artifact_registry.tf",
    "service_accounts.tf",
    "iam.tf",
    "pubsub.tf",
    "lanes.tf",
    "cloud_run.tf",
    "firestore.tf",
    "scheduler.tf",
    "monitoring.tf",
}


def _walk_attrs(value: Any, key: str) -> list[Any]:
    """Every value of attribute `key` anywhere below `value`."""
    found: list[Any] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if k == key:
                found.append(v)
            found.extend(_walk_attrs(v, key))
    elif isinstance(value, list):
        for item in value:
            found.extend(_walk_attrs(item, key))
    return found


# --- layout -------------------------------------------------------------------------------


def test_files_split_by_concern(terraform_dir):
    present = {p.name for p in terraform_dir.glob("*.tf")}
    assert present >= EXPECTED_FILES, f"missing: {sorted(EXPECTED_FILES - present)}"
    for extra in ("terraform.tfvars.example", "README.md"):
        assert (terraform_dir / extra).is_file(), f"terraform/{extra} is missing"


def test_versions_pin_terraform_and_google_provider(tf, h):
    required_version = None
    providers: dict[str, Any] = {}
    for tblock in tf.terraform_blocks:
        required_version = tblock.get("required_version", required_version)
        for rp in h.blocks_of(tblock, "required_providers"):
            providers.update(rp)
    assert required_version is not None
    assert ">= 1.6" in required_version
    google = h.as_map(providers["google"])
    assert google["source"] == "hashicorp/google"
    version = h.squash(google["version"])
    assert ">=6." in version and "<7." in version, f"google provider not pinned to 6.x: {version}"


def test_remote_state_backend_is_gcs(tf):
    backends = [b for t in tf.terraform_blocks for b in t.get("backend", [])]
    assert backends, "no backend block (backend.tf)"
    assert all("gcs" in b for b in backends), backends


def test_apis_enabled_and_never_disabled_on_destroy(tf, h):
    apis = tf.resource("google_project_service", "apis")
    assert apis["disable_on_destroy"] is False
    api_list = h.squash(tf.locals["apis"])
    for api in (
        "run",
        "pubsub",
        "firestore",
        "cloudscheduler",
        "artifactregistry",
        "cloudbuild",
        "monitoring",
        "logging",
        "iam",
        "secretmanager",
    ):
        assert f'"{api}.googleapis.com"' in api_list, f"{api} API is not enabled"


# --- variables / outputs --------------------------------------------------------------------


def test_every_variable_has_type_and_description(tf):
    assert tf.variables
    for name, body in tf.variables.items():
        assert body.get("type"), f"variable {name} has no type"
        description = body.get("description")
        assert isinstance(description, str) and len(description) >= 10, (
            f"variable {name} has no (meaningful) description"
        )


def test_every_output_has_description(tf):
    assert tf.outputs
    for name, body in tf.outputs.items():
        description = body.get("description")
        assert isinstance(description, str) and len(description) >= 10, (
            f"output {name} has no description"
        )


def test_key_outputs_exist(tf):
    for name in (
        "dispatcher_url",
        "worker_url",
        "task_topic",
        "dead_letter_topic",
        "task_subscription",
        "dead_letter_subscription",
        "dispatcher_service_account",
        "worker_service_account",
        "push_invoker_service_account",
        "scheduler_service_account",
        "artifact_registry_repository_url",
    ):
        assert name in tf.outputs, f"output {name} is missing"


def test_readme_documents_every_variable_and_output(tf, terraform_dir):
    readme = (terraform_dir / "README.md").read_text(encoding="utf-8")
    missing = [n for n in [*tf.variables, *tf.outputs] if f"`{n}`" not in readme]
    assert not missing, f"terraform/README.md does not document: {missing}"


def test_deploy_doc_documents_every_variable(tf, repo_root):
    doc = (repo_root / "docs" / "deploy.md").read_text(encoding="utf-8")
    missing = [n for n in tf.variables if f"`{n}`" not in doc]
    assert not missing, f"docs/deploy.md variable table misses: {missing}"


def test_tfvars_example_only_sets_declared_variables(tf, h, terraform_dir):
    example = h.parse_hcl((terraform_dir / "terraform.tfvars.example").read_text("utf-8"))
    unknown = set(example) - set(tf.variables)
    assert not unknown, f"terraform.tfvars.example sets undeclared variables: {unknown}"
    required = {n for n, body in tf.variables.items() if "default" not in body}
    assert required <= set(example), f"example lacks required variables {required - set(example)}"


def test_timeouts_are_consistent_with_the_ack_deadline(tf):
    defaults = {n: b.get("default") for n, b in tf.variables.items()}
    ack = defaults["ack_deadline_s"]
    assert defaults["worker_request_timeout_s"] <= ack
    # "well under": leave at least half of the deadline for extraction and Firestore writes.
    assert defaults["worker_fetch_timeout_s"] * 2 <= ack
    assert defaults["worker_fetch_timeout_s"] < defaults["worker_request_timeout_s"]
    # Preconditions on the worker resource hold for every worker service (shared and lanes).
    worker = tf.resource("google_cloud_run_v2_service", "worker")
    assert worker["for_each"] == "${local.worker_services}"
    conditions = [p["condition"] for p in worker["lifecycle"][0]["precondition"]]
    joined = " ".join(conditions)
    assert "var.worker_request_timeout_s <= var.ack_deadline_s" in joined
    assert "var.worker_fetch_timeout_s < var.ack_deadline_s" in joined


# --- Pub/Sub -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("subscription", "topic", "path"),
    [("tasks", "tasks", "/pubsub/push"), ("dead_letter", "dead_letter", "/pubsub/dead-letter")],
)
def test_push_subscription_targets_worker_with_oidc(tf, h, subscription, topic, path):
    body = tf.resource("google_pubsub_subscription", subscription)
    assert body["for_each"] == "${local.lanes}"
    assert body["topic"] == f"${{google_pubsub_topic.{topic}[each.key].id}}"
    push = h.block(body, "push_config")
    assert push["push_endpoint"] == WORKER_URI + path
    oidc = h.block(push, "oidc_token")
    assert oidc["service_account_email"] == PUSH_INVOKER_EMAIL
    # The same audience the receiving worker checks (its SCRAPEJOBS_PUSH_AUDIENCE).
    assert oidc["audience"] == WORKER_AUDIENCE
    assert "SCRAPEJOBS_PUSH_AUDIENCE" in tf.locals["worker_env"]
    assert "local.worker_audience" in h.squash(tf.locals["worker_env"])
    worker = tf.resource("google_cloud_run_v2_service", "worker")
    container = h.block(h.block(worker, "template"), "containers")
    [env] = [
        d["env"]
        for d in container["dynamic"]
        if "env" in d and "local.worker_env" in h.squash(d["env"]["for_each"])
    ]
    assert h.squash(env["for_each"]) == h.squash(
        "${merge(local.worker_env,local.worker_roles[each.value.role].env,"
        "{'SCRAPEJOBS_PUSH_AUDIENCE': '${local.worker_audiences[each.key]}'})}"
    ), "each worker service must check the audience of its own URL"


def test_worker_audience_is_the_worker_url(tf, h):
    audience = tf.locals["worker_audience"]
    assert audience == (
        "https://${local.worker_service_name}-${local.project_number}.${var.region}.run.app"
    )
    assert tf.locals["worker_service_name"] == '${local.worker_services["shared"].name}'
    # Every worker service: the deterministic URL of its own name.
    assert h.squash(tf.locals["worker_audiences"]) == h.squash(
        "${{for key, worker in local.worker_services : key => "
        '"https://${worker.name}-${local.project_number}.${var.region}.run.app"}}'
    )
    worker = tf.resource("google_cloud_run_v2_service", "worker")
    assert worker["for_each"] == "${local.worker_services}"
    assert worker["name"] == "${each.value.name}"
    assert worker["custom_audiences"] == ["${local.worker_audiences[each.key]}"]


@pytest.mark.parametrize("subscription", ["tasks", "dead_letter"])
def test_subscriptions_never_expire(tf, h, subscription):
    body = tf.resource("google_pubsub_subscription", subscription)
    assert h.block(body, "expiration_policy")["ttl"] == ""


def test_dead_letter_and_retry_policy(tf, h):
    body = tf.resource("google_pubsub_subscription", "tasks")
    policy = h.block(body, "dead_letter_policy")
    # Each lane dead-letters into its own dead-letter topic.
    assert body["for_each"] == "${local.lanes}"
    assert policy["dead_letter_topic"] == "${google_pubsub_topic.dead_letter[each.key].id}"
    assert policy["max_delivery_attempts"] == "${var.max_delivery_attempts}"
    retry = h.block(body, "retry_policy")
    assert retry["minimum_backoff"] == "${var.min_backoff_s}s"
    assert retry["maximum_backoff"] == "${var.max_backoff_s}s"
    assert body["ack_deadline_seconds"] == "${var.ack_deadline_s}"
    # No dead-letter loop on the dead-letter subscription itself.
    dead = tf.resource("google_pubsub_subscription", "dead_letter")
    assert "dead_letter_policy" not in dead


def test_pubsub_service_agent_grants(tf):
    assert tf.locals["pubsub_service_agent"] == (
        "serviceAccount:service-${local.project_number}@gcp-sa-pubsub.iam.gserviceaccount.com"
    )
    publishers = [
        b
        for b in tf.of_type("google_pubsub_topic_iam_member").values()
        if b["member"] == PUBSUB_AGENT and not _webhooks(b["topic"])
    ]
    # One grant per lane: for_each over every lane's dead-letter topic / task subscription.
    assert [(b["for_each"], b["topic"], b["role"]) for b in publishers] == [
        ("${google_pubsub_topic.dead_letter}", "${each.value.name}", "roles/pubsub.publisher")
    ]
    subscribers = [
        b
        for b in tf.of_type("google_pubsub_subscription_iam_member").values()
        if b["member"] == PUBSUB_AGENT and not _webhooks(b["subscription"])
    ]
    assert [(b["for_each"], b["subscription"], b["role"]) for b in subscribers] == [
        ("${google_pubsub_subscription.tasks}", "${each.value.name}", "roles/pubsub.subscriber")
    ]


def test_runtime_accounts_publish_to_task_topic_only(tf):
    """... of every lane, and the dispatcher may look them up (GET /v1/health)."""
    grants = {
        (b["member"], b.get("for_each"), b["topic"], b["role"])
        for b in tf.of_type("google_pubsub_topic_iam_member").values()
        if b["member"] != PUBSUB_AGENT and not _webhooks(b["topic"])
    }
    every_task_topic = "${google_pubsub_topic.tasks}"
    assert grants == {
        (
            "${google_service_account.dispatcher.member}",
            every_task_topic,
            "${each.value.name}",
            "roles/pubsub.publisher",
        ),
        (
            "${google_service_account.dispatcher.member}",
            every_task_topic,
            "${each.value.name}",
            "roles/pubsub.viewer",
        ),
        (
            "${google_service_account.worker.member}",
            every_task_topic,
            "${each.value.name}",
            "roles/pubsub.publisher",
        ),
        (
            "${google_service_account.renderer.member}",
            "${toset(local.renderer_lanes)}",
            "${google_pubsub_topic.tasks[each.value].name}",
            "roles/pubsub.publisher",
        ),
    }


def _webhooks(reference: str) -> bool:
    return "google_pubsub_topic.webhook" in reference or "subscription.webhooks" in reference


def test_webhook_events_are_pushed_to_the_worker_with_retries_and_dead_letters(tf, h):
    subscription = tf.resource("google_pubsub_subscription", "webhooks")
    assert subscription["topic"] == "${google_pubsub_topic.webhooks.id}"
    push = h.block(subscription, "push_config")
    # (the HCL parser quotes an interpolation that holds quotes: look inside it)
    endpoint = push["push_endpoint"]
    assert 'google_cloud_run_v2_service.worker["shared"].uri}/pubsub/webhook' in endpoint
    oidc = h.block(push, "oidc_token")
    assert oidc["service_account_email"] == PUSH_INVOKER_EMAIL
    assert 'local.worker_audiences["shared"]' in oidc["audience"]
    assert h.block(subscription, "retry_policy")["minimum_backoff"] == "${var.min_backoff_s}s"
    dead = h.block(subscription, "dead_letter_policy")
    assert dead["dead_letter_topic"] == "${google_pubsub_topic.webhook_dead_letter.id}"
    assert dead["max_delivery_attempts"] == "${var.max_delivery_attempts}"
    grants = tf.of_type("google_pubsub_topic_iam_member")
    publish = grants["services_publish_webhooks"]
    assert publish["topic"] == "${google_pubsub_topic.webhooks.name}"
    [members] = publish["for_each"]
    assert members == {
        "dispatcher": "${google_service_account.dispatcher.member}",
        "worker": "${google_service_account.worker.member}",
        "renderer": "${google_service_account.renderer.member}",
    }
    agent = grants["pubsub_agent_publishes_webhook_dead_letters"]
    assert agent["member"] == PUBSUB_AGENT and "webhook_dead_letter" in agent["topic"]
    subscribes = tf.of_type("google_pubsub_subscription_iam_member")
    assert subscribes["pubsub_agent_subscribes_webhooks"]["member"] == PUBSUB_AGENT
    assert h.as_map(tf.locals["common_env"])["SCRAPEJOBS_WEBHOOK_TOPIC"] == "${var.webhook_topic}"


def test_the_deployment_webhook_keys_come_from_secret_manager(tf, h):
    worker = tf.resource("google_cloud_run_v2_service", "worker")
    container = h.block(h.block(worker, "template"), "containers")
    [secret_env] = [
        d["env"]
        for d in container["dynamic"]
        if "env" in d and "webhook_signing_secret_id" in h.squash(d["env"]["for_each"])
    ]
    assert h.block(secret_env, "content")["name"] == "SCRAPEJOBS_WEBHOOK_SECRETS"
    access = tf.resource("google_secret_manager_secret_iam_member", "worker_reads_webhook_keys")
    assert access["role"] == "roles/secretmanager.secretAccessor"
    assert access["member"] == "${google_service_account.worker.member}"
    assert tf.variables["webhook_signing_secret_id"]["default"] == ""


def test_the_renderer_runs_with_least_privilege(tf, h):
    """The service that feeds hostile pages to a browser: its own identity, the scrapejobs
    database only, the render and processing lanes' topics and the webhook outbox, the files
    bucket to write and never read, no AI role, no secret but the proxy pools' (a rendered
    page's requests go through the job's proxy), and neither the webhook keys nor the AI key
    in its environment."""
    renderer = "${google_service_account.renderer.member}"
    grants = [
        (rtype, name, body)
        for rtype, name, body in tf.iter_resources()
        if rtype.endswith("_iam_member") and body.get("member") == renderer
    ]
    kinds = {(rtype, body["role"]) for rtype, _, body in grants}
    assert kinds == {
        ("google_project_iam_member", "roles/datastore.user"),
        ("google_project_iam_member", "roles/cloudtrace.agent"),
        ("google_project_iam_member", "roles/monitoring.metricWriter"),
        ("google_pubsub_topic_iam_member", "roles/pubsub.publisher"),
        ("google_storage_bucket_iam_member", "${google_project_iam_custom_role.files_writer.id}"),
        ("google_secret_manager_secret_iam_member", "roles/secretmanager.secretAccessor"),
    }
    [secret] = [b for t, _, b in grants if t == "google_secret_manager_secret_iam_member"]
    assert secret["secret_id"] == "${var.proxies_secret_id}"
    writer = tf.resource("google_project_iam_custom_role", "files_writer")
    assert sorted(writer["permissions"]) == ["storage.objects.create", "storage.objects.delete"]
    [files] = [b for t, _, b in grants if t == "google_storage_bucket_iam_member"]
    assert files["bucket"] == "${google_storage_bucket.files.name}"
    [datastore] = [b for t, _, b in grants if b["role"] == "roles/datastore.user"]
    condition = h.block(datastore, "condition")
    assert "databases/${var.firestore_database}" in condition["expression"]
    assert h.squash(tf.locals["renderer_lanes"]) == h.squash(
        '${[for lane in ["render", "processing"] : lane if contains(var.lanes, lane)]}'
    )
    webhook_publishers = tf.resource("google_pubsub_topic_iam_member", "services_publish_webhooks")
    [members] = webhook_publishers["for_each"]
    assert members["renderer"] == renderer
    container = h.block(
        h.block(tf.resource("google_cloud_run_v2_service", "worker"), "template"), "containers"
    )
    secret_envs = [
        h.squash(d["env"]["for_each"])
        for d in container["dynamic"]
        if "env" in d and "secret_id" in h.squash(d["env"]["for_each"])
    ]
    assert len(secret_envs) == 3  # the webhook keys, the AI key, the proxy pools
    kept_from_the_renderer = [e for e in secret_envs if "proxies_secret_id" not in e]
    assert len(kept_from_the_renderer) == 2
    for for_each in kept_from_the_renderer:
        assert h.squash('each.value.role == "renderer"') in for_each, for_each


# --- IAM hygiene ---------------------------------------------------------------------------


def test_no_authoritative_iam_resources(tf):
    offenders = [
        f"{t}.{n}"
        for t, n, _ in tf.iter_resources()
        if t.endswith("_iam_binding") or t.endswith("_iam_policy")
    ]
    offenders += [f"data.{t}.{n}" for (t, n) in tf.data if t.endswith("_iam_policy")]
    assert not offenders, f"authoritative IAM resources are forbidden: {offenders}"


def test_no_basic_roles(tf):
    for rtype, name, body in tf.iter_resources():
        for role in _walk_attrs(body, "role"):
            assert role not in BASIC_ROLES, f"{rtype}.{name} grants basic role {role}"


def test_no_project_level_impersonation_roles(tf):
    for name, body in tf.of_type("google_project_iam_member").items():
        assert body["role"] not in {
            "roles/iam.serviceAccountTokenCreator",
            "roles/iam.serviceAccountUser",
        }, f"google_project_iam_member.{name} grants {body['role']} project-wide"


def test_token_creator_only_for_pubsub_agent_on_push_invoker(tf):
    grants = [
        body
        for body in tf.of_type("google_service_account_iam_member").values()
        if body["role"] == "roles/iam.serviceAccountTokenCreator"
    ]
    assert len(grants) == 1
    assert grants[0]["service_account_id"] == "${google_service_account.push_invoker.name}"
    assert grants[0]["member"] == PUBSUB_AGENT


def _on_worker(body: dict[str, Any]) -> bool:
    """A grant on a worker service: for_each over every worker service (shared and lanes)."""
    return "google_cloud_run_v2_service.worker" in str(body.get("for_each", "")) or (
        "worker" in body["name"]
    )


def test_worker_iam_grants_cover_every_worker_service(tf):
    grants = [b for b in tf.of_type("google_cloud_run_v2_service_iam_member").values()]
    for body in grants:
        if _on_worker(body):
            assert body["name"] == "${each.value.name}"
            assert body["location"] == "${each.value.location}"
    # Only the dispatcher grants (and the dispatcher's on SearXNG) name a single service.
    for body in grants:
        if not _on_worker(body):
            assert body["name"] in (
                "${google_cloud_run_v2_service.dispatcher.name}",
                "${google_cloud_run_v2_service.searxng[0].name}",
            )


def test_worker_has_no_public_invoker(tf):
    for name, body in tf.of_type("google_cloud_run_v2_service_iam_member").items():
        if _on_worker(body):
            assert body["member"] not in PUBLIC_MEMBERS, f"{name} makes the worker public"


def test_worker_invokers(tf):
    invokers = {
        (body["for_each"], body["member"])
        for body in tf.of_type("google_cloud_run_v2_service_iam_member").values()
        if _on_worker(body) and body["role"] == "roles/run.invoker"
    }
    assert invokers == {(WORKERS, "${google_service_account.push_invoker.member}")}


def test_dispatcher_invokers(tf):
    bindings = [
        body
        for body in tf.of_type("google_cloud_run_v2_service_iam_member").values()
        if body["name"] == "${google_cloud_run_v2_service.dispatcher.name}"
        and body["role"] == "roles/run.invoker"
    ]
    members = {b["member"] for b in bindings}
    assert "${google_service_account.scheduler.member}" in members
    assert "${each.key}" in members  # var.dispatcher_invokers
    public = [b for b in bindings if b["member"] in PUBLIC_MEMBERS]
    assert len(public) == 1, "allUsers on the dispatcher must exist only for api_key mode"
    assert public[0]["count"] == "${local.api_key_mode ? 1 : 0}"
    assert tf.locals["api_key_mode"] == '${var.dispatcher_auth_mode == "api_key"}'


def test_push_invoker_can_only_invoke_the_worker(tf):
    for name, body in tf.of_type("google_cloud_run_v2_service_iam_member").items():
        if body["member"] == "${google_service_account.push_invoker.member}":
            assert body["for_each"] == WORKERS and body["name"] == "${each.value.name}", name
            assert body["role"] == "roles/run.invoker", name
    for rtype, name, body in tf.iter_resources():
        if rtype == "google_project_iam_member":
            assert "push_invoker" not in body["member"], f"{name}: push invoker at project level"


def test_runtime_accounts_are_dedicated(tf, h):
    dispatcher = h.block(tf.resource("google_cloud_run_v2_service", "dispatcher"), "template")
    assert dispatcher["service_account"] == "${google_service_account.dispatcher.email}"
    worker = h.block(tf.resource("google_cloud_run_v2_service", "worker"), "template")
    assert h.squash(worker["service_account"]) == h.squash(
        '${each.value.role == "renderer" ? google_service_account.renderer.email'
        " : google_service_account.worker.email}"
    )


# --- Cloud Run ---------------------------------------------------------------------------------


@pytest.mark.parametrize("service", ["dispatcher", "worker"])
def test_cloud_run_service_settings(tf, h, service):
    body = tf.resource("google_cloud_run_v2_service", service)
    assert body["ingress"] == "INGRESS_TRAFFIC_ALL"
    assert body["deletion_protection"] == "${var.deletion_protection}"
    template = h.block(body, "template")
    assert template["timeout"] == f"${{var.{service}_request_timeout_s}}s"
    # the worker services take their image, size and concurrency from their role
    sized = "${local.worker_roles[each.value.role]." if service == "worker" else "${var.dispatcher_"
    settings = h.as_map(tf.locals["worker_roles"])["worker"] if service == "worker" else {}
    for name in ("concurrency", "image", "cpu", "memory"):
        if service == "worker":
            assert settings[name] == f"${{var.worker_{name}}}"
    assert template["max_instance_request_concurrency"] == f"{sized}concurrency}}"
    scaling = h.block(template, "scaling")
    if service == "worker":  # per worker service; the shared one uses var.worker_*_instances
        assert scaling["min_instance_count"] == "${each.value.min_instances}"
        assert scaling["max_instance_count"] == "${each.value.max_instances}"
        shared = h.squash(tf.locals["worker_services"])
        assert '"min_instances":"${var.worker_min_instances}"' in shared
        assert '"max_instances":"${var.worker_max_instances}"' in shared
    else:
        assert scaling["min_instance_count"] == f"${{var.{service}_min_instances}}"
        assert scaling["max_instance_count"] == f"${{var.{service}_max_instances}}"
    container = h.block(template, "containers")
    assert container["image"] == f"{sized}image}}"
    limits = h.as_map(h.block(container, "resources")["limits"])
    if service == "worker":  # a dedicated lane worker's own size, else its role's
        assert limits == {
            size: f"${{coalesce(each.value.{size},local.worker_roles[each.value.role].{size})}}"
            for size in ("cpu", "memory")
        }
    else:
        assert limits == {"cpu": f"{sized}cpu}}", "memory": f"{sized}memory}}"}
    for probe in ("startup_probe", "liveness_probe"):
        http_get = h.block(h.block(container, probe), "http_get")
        assert http_get["path"] == "/healthz"
    ignored = [h.strip_expr(x) for x in body["lifecycle"][0]["ignore_changes"]]
    assert "template[0].containers[0].image" in ignored, "Cloud Build owns the image"


def test_no_port_env_and_required_env(tf, h):
    common = h.as_map(tf.locals["common_env"])
    for name in (
        "SCRAPEJOBS_PROJECT_ID",
        "SCRAPEJOBS_FIRESTORE_DATABASE",
        "SCRAPEJOBS_TASK_TOPIC",
        "SCRAPEJOBS_LOG_LEVEL",
        "SCRAPEJOBS_RETENTION_DAYS",
    ):
        assert name in common
    dispatcher_env = tf.locals["dispatcher_env"]
    assert "SCRAPEJOBS_AUTH_MODE" in dispatcher_env
    worker_env = tf.locals["worker_env"]
    for name in (
        "SCRAPEJOBS_PUSH_AUTH",
        "SCRAPEJOBS_PUSH_AUDIENCE",
        "SCRAPEJOBS_PUSH_SERVICE_ACCOUNT",
        "SCRAPEJOBS_PUSH_VERIFY_SIGNATURE",
        "SCRAPEJOBS_FETCH_TIMEOUT_S",
        "SCRAPEJOBS_FETCH_ALLOWLIST",
        "SCRAPEJOBS_PER_HOST_CONCURRENCY",
        "SCRAPEJOBS_PER_HOST_RPS",
        "SCRAPEJOBS_WARM_SLOT_IDLE_S",
    ):
        assert name in worker_env
    squashed = h.squash(worker_env)
    assert 'SCRAPEJOBS_PUSH_VERIFY_SIGNATURE="false"' in squashed or (
        '"SCRAPEJOBS_PUSH_VERIFY_SIGNATURE":"false"' in squashed
    )
    # Cloud Run sets PORT itself and rejects it as a user variable.
    assert not re.search(r"\bPORT\b", h.squash(str(tf.locals)).replace("SCRAPEJOBS_", ""))


def test_api_key_hashes_come_from_secret_manager(tf, h):
    dispatcher = tf.resource("google_cloud_run_v2_service", "dispatcher")
    container = h.block(h.block(dispatcher, "template"), "containers")
    dynamic_envs = [d["env"] for d in container.get("dynamic", []) if "env" in d]
    secret_envs = [
        d for d in dynamic_envs if h.block(d, "content").get("name") == "SCRAPEJOBS_API_KEY_HASHES"
    ]
    assert len(secret_envs) == 1
    content = h.block(secret_envs[0], "content")
    ref = h.block(h.block(content, "value_source"), "secret_key_ref")
    assert ref["version"] == "latest"
    accessor = tf.resource(
        "google_secret_manager_secret_iam_member", "dispatcher_reads_api_key_hashes"
    )
    assert accessor["role"] == "roles/secretmanager.secretAccessor"
    assert accessor["member"] == "${google_service_account.dispatcher.member}"


def test_auth_mode_variable_rejects_none(tf):
    var = tf.variables["dispatcher_auth_mode"]
    assert var["default"] == "iam"
    condition = var["validation"][0]["condition"]
    assert "iam" in condition and "api_key" in condition and "none" not in condition


def test_identity_aware_proxy_guards_the_dashboard_when_members_are_set(tf) -> None:
    """iam mode, dispatcher_iap_members set: IAP on the dispatcher's own service, its agent
    may invoke it, the members, the API's invokers and the scheduler may pass it; never in
    api_key mode; nothing of it when the list is empty."""
    assert tf.variables["dispatcher_iap_members"]["default"] == []
    assert tf.locals["dispatcher_iap"] == "${length(var.dispatcher_iap_members) > 0}"
    dispatcher = tf.resource("google_cloud_run_v2_service", "dispatcher")
    assert dispatcher["iap_enabled"] == "${local.dispatcher_iap}"
    assert dispatcher["provider"] == "${google-beta}" or dispatcher["provider"] == "google-beta"
    conditions = [p["condition"] for p in dispatcher["lifecycle"][0]["precondition"]]
    assert "${!local.dispatcher_iap || !local.api_key_mode}" in conditions
    agent = tf.resource("google_cloud_run_v2_service_iam_member", "iap_invokes_dispatcher")
    assert agent["count"] == "${local.dispatcher_iap ? 1 : 0}"
    assert (
        agent["role"] == "roles/run.invoker"
        and "google_project_service_identity.iap" in (agent["member"])
    )
    members = tf.resource("google_iap_web_cloud_run_service_iam_member", "dispatcher_iap_members")
    assert "var.dispatcher_iap_members" in members["for_each"]
    assert "var.dispatcher_invokers" in members["for_each"]
    assert members["role"] == "roles/iap.httpsResourceAccessor"
    scheduler = tf.resource("google_iap_web_cloud_run_service_iam_member", "scheduler_through_iap")
    assert scheduler["member"] == "${google_service_account.scheduler.member}"
    identity = tf.resource("google_project_service_identity", "iap")
    assert identity["service"] == "iap.googleapis.com"


# --- Firestore ---------------------------------------------------------------------------------


def test_firestore_database_native_mode(tf, h):
    db = tf.resource("google_firestore_database", "databases")
    assert db["type"] == "FIRESTORE_NATIVE" and db["name"] == "${each.value}"
    assert db["location_id"] == "${local.firestore_location}"
    databases = h.squash(tf.locals["firestore_databases"])
    assert '"main":"${var.firestore_database}"' in databases, databases


def test_identities_are_in_a_database_only_the_dispatcher_may_use(tf, h):
    """API keys and signed-out sessions live in a database of their own (Firestore grants per
    database): the worker's and renderer's grants are conditioned on the main database, the
    dispatcher's is not; the keys' index and the sessions' TTL are the identity database's."""
    from scrapejobs_dispatcher.settings import DispatcherSettings

    db = tf.resource("google_firestore_database", "databases")  # one per database
    assert '"identities":"${var.identity_database}"' in h.squash(tf.locals["firestore_databases"])
    assert db["deletion_policy"] == "ABANDON"
    [precondition] = h.block(db, "lifecycle")["precondition"]
    assert h.squash(precondition["condition"]) == h.squash(
        "${var.identity_database != var.firestore_database}"
    )
    default = tf.variables["identity_database"]["default"]
    assert default == DispatcherSettings.model_fields["identity_database"].default
    assert "SCRAPEJOBS_IDENTITY_DATABASE" in h.squash(tf.locals["dispatcher_env"])
    assert "IDENTITY" not in h.squash(tf.locals["worker_env"])

    # the parsed expression keeps HCL's escaped quotes
    main_only = (
        'resource.name == \\"projects/${var.project_id}/databases/${var.firestore_database}\\"'
    )
    for name in ("worker_datastore", "renderer_datastore"):
        grant = tf.resource("google_project_iam_member", name)
        assert h.block(grant, "condition")["expression"] == main_only, name
    assert "condition" not in tf.resource("google_project_iam_member", "dispatcher_datastore")

    keys_index = tf.resource("google_firestore_index", "api_keys_tenant_created_at")
    assert keys_index["database"] == "${var.identity_database}"
    sessions_ttl = tf.resource("google_firestore_field", "revoked_sessions_ttl")
    assert sessions_ttl["database"] == "${var.identity_database}"
    assert sessions_ttl["collection"] == "revoked_sessions" and sessions_ttl["field"] == "expire_at"
    assert "revoked_sessions" not in h.squash(tf.locals["ttl_collections"])


def test_jobs_status_created_at_index(tf, h):
    indexes = tf.of_type("google_firestore_index")
    matching = [
        body
        for body in indexes.values()
        if body["collection"] == "jobs"
        and [(f["field_path"], f["order"]) for f in h.blocks_of(body, "fields")]
        == [("status", "ASCENDING"), ("created_at", "DESCENDING")]
    ]
    assert matching, "no composite index jobs(status ASC, created_at DESC)"


@pytest.mark.parametrize(
    "fields",
    [
        # FirestoreMonitorStore.listed: a tenant's monitors, newest first, paged by id
        [("tenant", "ASCENDING"), ("created_at", "DESCENDING"), ("__name__", "DESCENDING")],
        # FirestoreMonitorStore.due: active monitors, soonest next check first
        [("status", "ASCENDING"), ("next_check_at", "ASCENDING")],
        # ... of one tenant (the tick, in a backlog)
        [("status", "ASCENDING"), ("tenant", "ASCENDING"), ("next_check_at", "ASCENDING")],
    ],
)
def test_monitors_queries_have_their_indexes(tf, h, fields):
    indexes = tf.of_type("google_firestore_index").values()
    assert any(
        body["collection"] == "monitors"
        and [(f["field_path"], f["order"]) for f in h.blocks_of(body, "fields")] == fields
        for body in indexes
    ), f"no composite index monitors{fields}"


@pytest.mark.parametrize(
    ("scope", "fields"),
    [
        # FirestoreRecoveryQueries.tasks_with_status: a job's results at the root ...
        ("COLLECTION", ["job_id", "status", "updated_at"]),
        # ... under their job (written before the root layout) ...
        ("COLLECTION", ["status", "updated_at"]),
        # ... and every job's, of one host, of one tenant
        ("COLLECTION_GROUP", ["status", "updated_at"]),
        ("COLLECTION_GROUP", ["status", "host", "updated_at"]),
        ("COLLECTION_GROUP", ["status", "tenant", "updated_at"]),
    ],
)
def test_the_queries_of_results_by_status_have_their_indexes(tf, h, scope, fields):
    indexes = [
        body
        for body in tf.of_type("google_firestore_index").values()
        if body["collection"] == "tasks" and body["query_scope"] == "${each.value.scope}"
    ]
    [by_status] = indexes
    [each] = by_status["for_each"]  # the parser gives a one-item list as its item
    made = [
        (i["scope"], [i["fields"]] if isinstance(i["fields"], str) else i["fields"])
        for i in each.values()
    ]
    assert (scope, fields[:-1]) in made
    assert [(f["field_path"], f["order"]) for f in h.blocks_of(by_status, "fields")][-1:] == [
        ("updated_at", "DESCENDING")
    ]


def test_the_ticks_query_of_open_checks_has_its_index(tf, h):
    """FirestoreMonitorChecks.open_checks: a collection-group query of every monitor's
    checks."""
    indexes = tf.of_type("google_firestore_index").values()
    for fields in (
        [("open", "ASCENDING"), ("created_at", "ASCENDING")],
        [("open", "ASCENDING"), ("tenant", "ASCENDING"), ("created_at", "ASCENDING")],
    ):
        assert any(
            body["collection"] == "checks"
            and body["query_scope"] == "COLLECTION_GROUP"
            and [(f["field_path"], f["order"]) for f in h.blocks_of(body, "fields")] == fields
            for body in indexes
        ), f"no collection-group index checks{fields}"


def test_ttl_fields(tf, h):
    fields = tf.of_type("google_firestore_field")
    ttl = [b for b in fields.values() if b["field"] == "expire_at"]
    # the main database's collections, and the identity database's signed-out sessions
    body = fields["expire_at_ttl"]
    assert [b["collection"] for b in ttl if b is not body] == ["revoked_sessions"]
    assert "ttl_config" in body, "expire_at needs a ttl_config block"
    assert "index_config" in body, "expire_at should be exempt from indexing"
    assert body["for_each"] == "${local.ttl_collections}"
    collections = h.squash(tf.locals["ttl_collections"])
    # every collection group whose documents carry expire_at (the adapters write it on each)
    groups = ("jobs", "batches", "tasks", "counters", "crawl", "hosts", "slots")
    groups += ("scheduler_triggers",)
    for name in (
        *groups,
        "idempotency_keys",
        "rejected_messages",
        "stats_slots",
        "stats_rollups",
        "workers",
        "handoffs",
        "ai_answers",
        "page_cache",
        "checks",  # a monitor's checks and their pages: its retention_days
        "check_pages",
        "same_pages",  # a check's unchanged pages, in chunks
        "snapshots",  # a scrape's change tracking's (a monitor's carry no expire_at)
    ):
        assert f'"{name}"' in collections, f"no TTL policy for {name}"
    assert "SCRAPEJOBS_RETENTION_DAYS" in h.as_map(tf.locals["common_env"])


def test_page_cache_entries_are_not_indexed(tf, h):
    """The adapter's one entry field (read by key, never queried) is exempt from indexing."""
    from datetime import UTC, datetime, timedelta

    from scrapejobs_shared.adapters.firestore.page_cache import stage_kept
    from scrapejobs_shared.domain.records import TaskRecord
    from scrapejobs_shared.domain.statuses import TaskStatus

    class Target:
        def set(self, ref: Any, doc: dict[str, Any]) -> None:
            self.doc = doc

    class Client:
        def collection(self, name: str) -> Any:
            return type("Pages", (), {"document": lambda _self, key: key})()

    now = datetime(2026, 11, 26, tzinfo=UTC)
    record = TaskRecord(
        job_id="j",
        id="t",
        url="https://example.com/",
        status=TaskStatus.SUCCEEDED,
        created_at=now,
        updated_at=now,
        expire_at=now + timedelta(days=1),
        fetched_at=now,
    )
    target = Target()
    stage_kept(target, Client(), [("k", record)], now)
    fields = {
        body["field"]: body
        for body in tf.of_type("google_firestore_field").values()
        if body.get("collection") == "page_cache"
    }
    assert set(target.doc) - {"expire_at"} == set(fields), "page_cache fields not exempted"
    for body in fields.values():
        assert h.blocks_of(body, "index_config") == [{}], "an empty index_config exempts it"


# --- Cloud Scheduler ------------------------------------------------------------------------


def test_the_scheduler_identity_is_the_dispatchers_scheduler_role(tf, h):
    identities = h.squash(str(tf.locals["dispatcher_env"]))
    assert "google_service_account.scheduler.email" in identities
    assert 'role="scheduler"' in identities or '"role":"scheduler"' in identities
    assert "var.dispatcher_identities" in identities


def test_scheduler_jobs_post_to_dispatcher_with_oidc(tf, h):
    job = tf.resource("google_cloud_scheduler_job", "schedules")
    assert job["for_each"] == "${var.schedules}"
    target = h.block(job, "http_target")
    assert target["http_method"] == "POST"
    # each schedule's jobs belong to its tenant (a scheduler key submits for the tenant named)
    assert target["uri"] == DISPATCHER_URI + "/v1/jobs?tenant=${each.value.tenant}"
    assert "base64encode(jsonencode(" in h.squash(target["body"])
    headers = h.squash(str(target["headers"]))
    assert '"Content-Type"="application/json"' in headers or (
        '"Content-Type":"application/json"' in headers
    )
    # api_key mode: the dispatcher accepts only X-API-Key, so the scheduler must send one.
    assert "X-API-Key" in headers and "local.api_key_mode" in headers
    oidc = h.block(target, "oidc_token")
    assert oidc["service_account_email"] == SCHEDULER_EMAIL
    assert oidc["audience"] == DISPATCHER_URI
    assert h.block(job, "retry_config")


def test_example_schedule_bodies_are_valid_job_requests(h, terraform_dir):
    from scrapejobs_shared.domain.jobspec import JobRequest

    example = h.parse_hcl((terraform_dir / "terraform.tfvars.example").read_text("utf-8"))
    schedules = h.as_map(example["schedules"])
    assert schedules
    for name, schedule in schedules.items():
        body = h.as_map(schedule)["body"]
        JobRequest.model_validate_json(body)  # raises on drift from the API schema
        assert len(h.as_map(schedule)["cron"].split()) == 5, name


def test_every_scheduler_job_has_oidc(tf, h):
    for name, body in tf.of_type("google_cloud_scheduler_job").items():
        target = h.block(body, "http_target")
        assert "oidc_token" in target, f"scheduler job {name} sends no OIDC token"


def test_stuck_submissions_are_republished_on_a_schedule(tf, h):
    [jobs] = tf.locals["maintenance_jobs"]
    assert jobs["republish-stuck"]["path"] == "/v1/maintenance/republish"
    assert jobs["monitors"]["path"] == "/v1/maintenance/monitors"
    assert jobs["monitors"]["schedule"] == "* * * * *"  # a monitor's finest schedule
    job = tf.resource("google_cloud_scheduler_job", "maintenance")
    assert job["for_each"] == "${local.maintenance_jobs}"
    target = h.block(job, "http_target")
    assert target["http_method"] == "POST"
    assert target["uri"] == DISPATCHER_URI + "${each.value.path}"
    assert h.block(target, "oidc_token")["audience"] == DISPATCHER_URI
    index = tf.resource("google_firestore_index", "jobs_publishing_created_at")
    assert [f["field_path"] for f in h.blocks_of(index, "fields")] == ["publishing", "created_at"]


def test_lost_messages_are_reconciled_on_a_schedule(tf, h):
    job = tf.locals["maintenance_jobs"][0]["reconcile"]
    assert job["path"] == "/v1/maintenance/reconcile" and job["schedule"] == "*/5 * * * *"
    index = tf.resource("google_firestore_index", "batches_active_updated_at")
    assert index["query_scope"] == "COLLECTION_GROUP"
    assert [f["field_path"] for f in h.blocks_of(index, "fields")] == ["active", "updated_at"]
    in_jobs = tf.resource("google_firestore_index", "jobs_batch_active_updated_at")
    assert in_jobs["collection"] == "jobs" and in_jobs["query_scope"] == "COLLECTION"
    fields = [f["field_path"] for f in h.blocks_of(in_jobs, "fields")]
    assert fields == ["b.active", "b.updated_at"]  # batch_in_job.BATCH
    # deferred batches waiting for their time: a job's (a cancel), every job's overdue ones
    waiting = tf.resource("google_firestore_field", "batches_wait_until")
    assert waiting["collection"] == "batches" and waiting["field"] == "wait_until"
    scopes = {i["query_scope"] for i in h.block(waiting, "index_config")["indexes"]}
    assert scopes == {"COLLECTION", "COLLECTION_GROUP"}


# --- Monitoring ---------------------------------------------------------------------------------


def test_alerts_cover_dead_letters_and_backlog(tf, h):
    policies = tf.of_type("google_monitoring_alert_policy")
    filters = {
        name: [h.block(c, "condition_threshold")["filter"] for c in h.blocks_of(body, "conditions")]
        for name, body in policies.items()
    }
    flat = " ".join(f for fs in filters.values() for f in fs)
    assert "subscription/dead_letter_message_count" in flat
    assert "subscription/num_undelivered_messages" in flat
    # Every lane's subscriptions: subscription_id = one_of(<every lane's name>).
    every_task_sub = "subscription_id = one_of(${local.task_subscription_ids})"
    every_dead_sub = "subscription_id = one_of(${local.dead_letter_subscription_ids})"
    assert h.squash(tf.locals["task_subscription_ids"]) == h.squash(
        '${join(", ",formatlist("\\"%s\\"",'
        "[for lane in var.lanes : google_pubsub_subscription.tasks[lane].name]))}"
    )
    assert h.squash(tf.locals["dead_letter_subscription_ids"]) == h.squash(
        '${join(", ",formatlist("\\"%s\\"",'
        "[for lane in var.lanes : google_pubsub_subscription.dead_letter[lane].name]))}"
    )
    [dead_letters] = filters["dead_letters"]
    assert every_task_sub in dead_letters and "dead_letter_message_count" in dead_letters
    [dead_backlog] = filters["dead_letter_backlog"]
    assert every_dead_sub in dead_backlog and "num_undelivered_messages" in dead_backlog
    backlog = [f for fs in filters.values() for f in fs if "oldest_unacked_message_age" in f]
    assert backlog and every_task_sub in backlog[0]
    # One time series, hence one incident, per subscription (it names the lane).
    for name in ("dead_letters", "dead_letter_backlog", "task_backlog_age"):
        condition = h.block(h.block(policies[name], "conditions"), "condition_threshold")
        aggregation = h.block(condition, "aggregations")
        assert aggregation["group_by_fields"] == ["resource.label.subscription_id"], name
    for name, body in policies.items():
        assert body["notification_channels"] == "${var.notification_channels}", name
    age = policies["task_backlog_age"]
    threshold = h.block(h.block(age, "conditions"), "condition_threshold")["threshold_value"]
    assert threshold == "${var.task_backlog_age_alert_s}"


def test_every_service_env_var_is_a_setting(tf, h) -> None:
    """Terraform never sets an environment variable the services would silently ignore."""
    from scrapejobs_dispatcher.settings import DispatcherSettings
    from scrapejobs_worker.settings import WorkerSettings

    def fields(settings: type) -> set[str]:
        return {f"SCRAPEJOBS_{name.upper()}" for name in settings.model_fields}

    def named_in(expression: object) -> set[str]:
        return set(ENV_NAME.findall(h.squash(str(expression))))

    common = named_in(tf.locals["common_env"])
    assert "SCRAPEJOBS_PROJECT_ID" in common  # the expressions are read, not their characters
    for env_name, settings in (
        ("dispatcher_env", DispatcherSettings),
        ("worker_env", WorkerSettings),
    ):
        unknown = (common | named_in(tf.locals[env_name])) - fields(settings)
        assert not unknown, f"{env_name} sets unknown variables {sorted(unknown)}"
    # every name anywhere in the configuration (secret-backed ones are set in cloud_run.tf)
    everywhere = set(ENV_NAME.findall("\n".join(tf.files.values())))
    unknown = everywhere - fields(DispatcherSettings) - fields(WorkerSettings)
    assert not unknown, f"Terraform sets unknown variables {sorted(unknown)}"


ENV_NAME = re.compile(r"\b(SCRAPEJOBS_[A-Z0-9_]+)\b")


# --- telemetry -----------------------------------------------------------------------------

TELEMETRY_ROLES = {"roles/cloudtrace.agent", "roles/monitoring.metricWriter"}


def test_runtime_accounts_may_write_traces_and_metrics(tf) -> None:
    grants = {
        (body["member"], body["role"])
        for body in tf.of_type("google_project_iam_member").values()
        if body["role"] in TELEMETRY_ROLES
    }
    assert grants == {
        (f"${{google_service_account.{service}.member}}", role)
        for service in ("dispatcher", "worker", "renderer")
        for role in TELEMETRY_ROLES
    }


def test_telemetry_roles_are_granted_only_when_exporting_to_gcp(tf, h) -> None:
    assert h.strip_expr(tf.locals["telemetry_to_gcp"]) == 'var.telemetry_exporter == "gcp"'
    for name, body in tf.of_type("google_project_iam_member").items():
        if body["role"] in TELEMETRY_ROLES:
            count = h.strip_expr(body["count"])
            assert count == "local.telemetry_to_gcp ? 1 : 0", f"{name}: count = {count}"


def test_both_services_export_telemetry_to_gcp_by_default(tf, h) -> None:
    variable = tf.variables["telemetry_exporter"]
    assert variable["default"] == "gcp"
    condition = h.squash(variable["validation"][0]["condition"])
    assert all(f'"{kind}"' in condition for kind in ("none", "otlp", "gcp"))
    assert '"console"' not in condition  # multi-line JSON on stdout would garble the logs
    common = h.as_map(tf.locals["common_env"])
    assert common["SCRAPEJOBS_TELEMETRY_EXPORTER"] == "${var.telemetry_exporter}"
    assert "SCRAPEJOBS_TELEMETRY_TRACE_RATIO" in common
    for env in ("dispatcher_env", "worker_env"):
        assert "merge(local.common_env," in h.squash(tf.locals[env]), f"{env} merges common_env"
    assert "SCRAPEJOBS_TASK_SUBSCRIPTION" in tf.locals["worker_env"]


def test_the_telemetry_setting_accepts_what_terraform_allows() -> None:
    from scrapejobs_dispatcher.settings import DispatcherSettings
    from scrapejobs_worker.settings import WorkerSettings

    for settings in (DispatcherSettings, WorkerSettings):
        for kind in ("none", "otlp", "gcp"):
            assert settings(telemetry_exporter=kind).telemetry_exporter == kind


def test_a_scrape_answers_before_cloud_run_cuts_the_dispatchers_request(tf, h) -> None:
    """POST /v1/scrape waits at most SCRAPEJOBS_SCRAPE_MAX_WAIT_S: below the request timeout
    (default 60 s), so a slow page gets the documented 202 naming its job, not a cut request."""
    env = h.squash(str(tf.locals["dispatcher_env"]))
    expected = '"SCRAPEJOBS_SCRAPE_MAX_WAIT_S":"${tostring(var.dispatcher_request_timeout_s-5)}"'
    assert expected in env, env
    timeout = tf.variables["dispatcher_request_timeout_s"]
    assert timeout["default"] - 5 > 0
    assert "dispatcher_request_timeout_s>=15" in h.squash(timeout["validation"][0]["condition"])


def test_the_dispatcher_coalesces_submissions_as_configured(tf, h) -> None:
    """The coalescing windows reach the dispatcher, within the ranges its settings accept, and a
    keyed submission is taken as lost only after a request could still be running."""
    from pydantic import ValidationError

    from scrapejobs_dispatcher.settings import DispatcherSettings

    env = h.squash(str(tf.locals["dispatcher_env"]))
    for name, variable in (
        ("SCRAPEJOBS_COALESCE_WINDOW_MS", "dispatcher_coalesce_window_ms"),
        ("SCRAPEJOBS_COALESCE_BUSY_WINDOW_MS", "dispatcher_coalesce_busy_window_ms"),
    ):
        assert f'"{name}":"${{tostring(var.{variable})}}"' in env, env
        field = variable.removeprefix("dispatcher_")
        default = tf.variables[variable]["default"]
        assert DispatcherSettings.model_fields[field].default == default
        condition = h.squash(tf.variables[variable]["validation"][0]["condition"])
        low, high = (float(n) for n in re.findall(r"[<>]=(\d+)", condition))
        DispatcherSettings(**{field: low})
        DispatcherSettings(**{field: high})
        with pytest.raises(ValidationError):
            DispatcherSettings(**{field: high + 1})
    stale = '"SCRAPEJOBS_IDEMPOTENCY_STALE_S":"${tostring(var.dispatcher_request_timeout_s+60)}"'
    assert stale in env, env
    assert tf.variables["dispatcher_request_timeout_s"]["default"] + 60 == (
        DispatcherSettings.model_fields["idempotency_stale_s"].default
    )


def test_dependency_deadlines_reach_both_services_within_their_settings_range(tf, h) -> None:
    """SCRAPEJOBS_FIRESTORE_TIMEOUT_S and SCRAPEJOBS_PUBSUB_TIMEOUT_S: set for every service
    (common_env), defaulting as the settings do, validated to the range the settings accept."""
    from pydantic import ValidationError

    from scrapejobs_shared.config.settings import CommonSettings

    env = h.squash(str(tf.locals["common_env"]))
    for name, variable in (
        ("SCRAPEJOBS_FIRESTORE_TIMEOUT_S", "firestore_timeout_s"),
        ("SCRAPEJOBS_PUBSUB_TIMEOUT_S", "pubsub_timeout_s"),
    ):
        assert f'"{name}":"${{tostring(var.{variable})}}"' in env, env
        assert CommonSettings.model_fields[variable].default == tf.variables[variable]["default"]
        condition = h.squash(tf.variables[variable]["validation"][0]["condition"])
        assert f"var.{variable}>0" in condition and f"var.{variable}<=60" in condition
        CommonSettings(**{variable: 60})
        for refused in (0, 61):
            with pytest.raises(ValidationError):
                CommonSettings(**{variable: refused})


def test_the_ai_stage_s_provider_reaches_both_services_and_vertex_only_the_worker(tf, h) -> None:
    """ai_provider sets SCRAPEJOBS_AI_* on both services (the dispatcher refuses ai stages
    without one); only with vertex is the API enabled and roles/aiplatform.user granted, to the
    worker (the one service calling the model); the openai key comes from a secret only the
    worker reads; answers and handoffs expire by TTL."""
    from scrapejobs_shared.config.settings import CommonSettings

    ai_env = h.squash(tf.locals["ai_env"])
    for name, variable in (
        ("SCRAPEJOBS_AI_PROVIDER", "ai_provider"),
        ("SCRAPEJOBS_AI_MODEL", "ai_model"),
        ("SCRAPEJOBS_AI_BASE_URL", "ai_base_url"),
        ("SCRAPEJOBS_AI_LOCATION", "ai_location"),
    ):
        assert f'"{name}":"${{var.{variable}}}"' in ai_env, ai_env
    assert 'var.ai_provider==""?{}' in ai_env  # nothing without a provider
    assert "local.ai_prices" in ai_env
    prices = h.squash(tf.locals["ai_prices"])
    for name, variable in (
        ("SCRAPEJOBS_AI_PRICE_PER_MTOK_IN", "ai_price_per_mtok_in"),
        ("SCRAPEJOBS_AI_PRICE_PER_MTOK_OUT", "ai_price_per_mtok_out"),
    ):
        assert f"var.{variable}==None?{{}}" in prices and name in prices, prices  # null: None
        assert tf.variables[variable]["default"] is None  # no cost unless priced
    for env in ("dispatcher_env", "worker_env"):
        assert "local.ai_env" in h.squash(tf.locals[env])
    assert (
        tf.variables["ai_location"]["default"] == CommonSettings.model_fields["ai_location"].default
    )
    assert (
        tf.variables["ai_max_in_flight"]["default"]
        == CommonSettings.model_fields["ai_max_in_flight"].default
    )
    grant = tf.resource("google_project_iam_member", "worker_calls_vertex_ai")
    assert grant["role"] == "roles/aiplatform.user"
    assert grant["member"] == "${google_service_account.worker.member}"
    assert "local.ai_vertex" in h.squash(grant["count"])
    api = tf.resource("google_project_service", "aiplatform")
    assert api["service"] == "aiplatform.googleapis.com" and "local.ai_vertex" in h.squash(
        api["count"]
    )
    key = tf.resource("google_secret_manager_secret_iam_member", "worker_reads_ai_key")
    assert key["member"] == "${google_service_account.worker.member}"
    assert {"handoffs", "ai_answers"} <= set(h.squash(tf.locals["ttl_collections"]).split('"'))


def test_the_dispatcher_knows_each_schedule_a_scheduler_may_send(tf, h) -> None:
    """SCRAPEJOBS_SCHEDULES names each Cloud Scheduler job as Terraform names it, with its
    tenant and the SHA-256 of the body it POSTs (the same re-encoding the job sends)."""
    env = h.squash(tf.locals["dispatcher_env"])
    assert '"SCRAPEJOBS_SCHEDULES":"${jsonencode({' in env, env
    assert '"${var.name_prefix}-${k}"' in env and "sha256(jsonencode(jsondecode(s.body)))" in env
    job = tf.resource("google_cloud_scheduler_job", "schedules")
    assert job["name"] == "${var.name_prefix}-${each.key}"
    body = h.squash(job["http_target"][0]["body"])
    assert body == "${base64encode(jsonencode(jsondecode(each.value.body)))}"


def test_iap_on_the_dispatcher_gives_the_app_its_assertions_audience(tf, h) -> None:
    """With IAP on the dispatcher's service, the app verifies IAP's signed assertions against
    that service's audience (unless dispatcher_iap_audience names another, a load balancer's)."""
    env = h.squash(tf.locals["dispatcher_env"])
    assert '"SCRAPEJOBS_IAP_AUDIENCE":"${var.dispatcher_iap_audience!=""?' in env, env
    assert (
        "/projects/${local.project_number}/locations/${var.region}/services/"
        "${local.dispatcher_service_name}" in env
    )
    assert "local.dispatcher_iap?" in env


def test_searxng_runs_beside_the_dispatcher_only_when_asked_and_only_it_may_call_it(
    tf, h, terraform_dir
):
    """searxng_service (off by default): SearXNG's pinned image with settings turning its JSON
    API on, its key from a secret versioned out of band, scaled to zero; the dispatcher's
    identity its only invoker, searching through it with an ID token for its URL; its own
    identity reads its two secrets and nothing else."""
    import yaml

    assert tf.variables["searxng_service"]["default"] is False
    assert ":latest" not in tf.variables["searxng_image"]["default"]
    service = tf.resource("google_cloud_run_v2_service", "searxng")
    assert h.squash(service["count"]) == h.squash("${var.searxng_service ? 1 : 0}")
    template = h.block(service, "template")
    assert h.block(template, "scaling")["min_instance_count"] == 0
    container = h.block(template, "containers")
    envs = {e["name"]: e for e in h.blocks_of(container, "env")}
    assert envs["SEARXNG_SETTINGS_PATH"]["value"] == "/etc/scrapejobs-searxng/settings.yml"
    secret_ref = h.block(h.block(envs["SEARXNG_SECRET"], "value_source"), "secret_key_ref")
    assert "searxng_secret" in secret_ref["secret"]
    # the key is never in Terraform state: the only version Terraform writes is the settings
    assert set(tf.of_type("google_secret_manager_secret_version")) == {"searxng_settings"}
    settings = yaml.safe_load((terraform_dir / "searxng" / "settings.yml").read_text())
    assert settings["use_default_settings"] is True and "json" in settings["search"]["formats"]
    assert settings["server"]["limiter"] is False
    invokers = [
        body
        for t, _, body in tf.iter_resources()
        if t == "google_cloud_run_v2_service_iam_member" and "searxng" in str(body.get("name"))
    ]
    assert [b["member"] for b in invokers] == ["${google_service_account.dispatcher.member}"]
    searxng = "${google_service_account.searxng[0].member}"
    grants = [
        (t, body["role"])
        for t, _, body in tf.iter_resources()
        if t.endswith("_iam_member") and body.get("member") == searxng
    ]
    assert grants == [
        ("google_secret_manager_secret_iam_member", "roles/secretmanager.secretAccessor")
    ]
    locals_tf = h.squash(tf.files["locals.tf"])
    uri = "google_cloud_run_v2_service.searxng[0].uri"
    assert (
        h.squash(f"SCRAPEJOBS_SEARXNG_URL = var.searxng_service ? {uri} : var.searxng_url")
        in locals_tf
    )
    assert h.squash(f'SCRAPEJOBS_SEARXNG_AUDIENCE = var.searxng_service ? {uri} : ""') in locals_tf
