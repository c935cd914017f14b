"""Checks of cloudbuild.yaml: step order, image tags, substitutions, deployment."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
BUILTINS = {
    "PROJECT_ID",
    "PROJECT_NUMBER",
    "BUILD_ID",
    "LOCATION",
    "COMMIT_SHA",
    "SHORT_SHA",
    "REVISION_ID",
    "REPO_NAME",
    "REPO_FULL_NAME",
    "BRANCH_NAME",
    "TAG_NAME",
    "REF_NAME",
    "TRIGGER_NAME",
    "SERVICE_ACCOUNT_EMAIL",
    "SERVICE_ACCOUNT",
}
IMAGE_PREFIX = "${_REGION}-docker.pkg.dev/$PROJECT_ID/${_REPOSITORY}/"
# $$ is an escaped dollar; ${NAME} / $NAME are substitutions.
SUBSTITUTION = re.compile(r"\$\$|\$\{([A-Za-z0-9_]+)\}|\$([A-Za-z_][A-Za-z0-9_]*)|\$")


@pytest.fixture(scope="module")
def build() -> dict[str, Any]:
    data = yaml.safe_load((REPO_ROOT / "cloudbuild.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def steps(build) -> list[dict[str, Any]]:
    steps = build["steps"]
    ids = [s.get("id") for s in steps]
    assert all(ids), "every step needs an id"
    assert len(set(ids)) == len(ids), "step ids must be unique"
    return list(steps)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _text(step: dict[str, Any]) -> str:
    return " ".join(_strings(step.get("args", [])))


def _ancestors(steps: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Transitive predecessors per step id, with Cloud Build's waitFor semantics."""
    direct: dict[str, set[str]] = {}
    for index, step in enumerate(steps):
        wait_for = step.get("waitFor")
        if wait_for is None:
            direct[step["id"]] = {s["id"] for s in steps[:index]}
        elif wait_for == ["-"]:
            direct[step["id"]] = set()
        else:
            known = {s["id"] for s in steps[:index]}
            assert set(wait_for) <= known, f"{step['id']} waits for unknown/later steps"
            direct[step["id"]] = set(wait_for)
    closure: dict[str, set[str]] = {}
    for step in steps:
        seen: set[str] = set()
        todo = list(direct[step["id"]])
        while todo:
            current = todo.pop()
            if current not in seen:
                seen.add(current)
                todo.extend(direct[current])
        closure[step["id"]] = seen
    return closure


def _ids(steps: list[dict[str, Any]], prefix: str) -> list[str]:
    found = [s["id"] for s in steps if s["id"].startswith(prefix)]
    assert found, f"no {prefix}* step"
    return found


def test_step_order_lint_test_build_push_deploy(steps):
    order = [s["id"] for s in steps]
    phases = ["lint", "test", "build", "push", "deploy"]
    positions = {p: [order.index(i) for i in _ids(steps, p)] for p in phases}
    for earlier, later in itertools.pairwise(phases):
        assert max(positions[earlier]) < min(positions[later]), (
            f"every {earlier} step must come before every {later} step: {order}"
        )
    # And the dependency graph enforces it even where steps run in parallel.
    ancestors = _ancestors(steps)
    assert "sync" in ancestors["lint"]
    assert "lint" in ancestors["test"]
    for build_id in _ids(steps, "build"):
        assert "test" in ancestors[build_id]
    for svc in ("dispatcher", "worker"):
        assert f"build-{svc}" in ancestors[f"push-{svc}"]
        for deploy_id in _ids(steps, "deploy"):
            assert f"push-{svc}" in ancestors[deploy_id]
    assert "deploy-worker" in ancestors["deploy-dispatcher"], "worker first, then dispatcher"


def test_sync_lint_and_test_commands(steps):
    by_id = {s["id"]: s for s in steps}
    assert "uv sync --frozen" in _text(by_id["sync"])
    assert "make lint" in _text(by_id["lint"])
    assert "make test" in _text(by_id["test"])
    assert (
        "google-cloud-cli" in by_id["test"]["name"] or "_CLOUD_CLI_IMAGE" in by_id["test"]["name"]
    )


IMAGES = {
    "dispatcher": "dispatcher",
    "worker": "worker",
    "renderer": "worker",
}  # image: its service


def test_images_built_from_repo_root_and_tagged_with_commit_sha(steps, build):
    for image, svc in IMAGES.items():
        step = next(s for s in steps if s["id"] == f"build-{image}")
        assert step["name"].startswith("gcr.io/cloud-builders/docker")
        args = step["args"]
        assert args[0] == "build"
        assert args[-1] == ".", "the build context must be the repository root"
        assert not [a for a in args if a.startswith(("--file", "-f"))], "the root Dockerfile"
        assert f"--build-arg=SERVICE={svc}" in args
        assert (REPO_ROOT / "Dockerfile").is_file()
        tags = [a.split("=", 1)[1] for a in args if a.startswith("--tag=")]
        assert tags == [f"{IMAGE_PREFIX}{image}:$COMMIT_SHA"]
        if svc == "worker":  # two targets of the worker: the worker and the renderer
            assert f"--target={'runtime' if image == 'worker' else 'renderer'}" in args
    images = build["images"]
    assert sorted(images) == sorted(f"{IMAGE_PREFIX}{image}:$COMMIT_SHA" for image in IMAGES)
    for ref in _strings(build):
        assert ":latest" not in ref, "never tag or deploy :latest"


def test_images_pushed_to_artifact_registry(steps):
    for image in IMAGES:
        step = next(s for s in steps if s["id"] == f"push-{image}")
        assert step["args"] == ["push", f"{IMAGE_PREFIX}{image}:$COMMIT_SHA"]
    assert "-docker.pkg.dev/" in IMAGE_PREFIX


def test_deploy_steps(steps):
    worker = _text(next(s for s in steps if s["id"] == "deploy-worker"))
    # the shared worker and every dedicated lane worker get the new image
    assert "for service in ${_WORKER_SERVICE} ${_LANE_WORKER_SERVICES}; do" in worker
    assert 'gcloud run deploy "$$service"' in worker
    # the renderer gets its own image, with the workers and before the dispatcher
    assert 'gcloud run deploy "${_RENDERER_SERVICE}"' in worker
    assert f"--image={IMAGE_PREFIX}renderer:$COMMIT_SHA" in worker.replace('"', "")
    dispatcher = _text(next(s for s in steps if s["id"] == "deploy-dispatcher"))
    assert 'gcloud run deploy "${_DISPATCHER_SERVICE}"' in dispatcher
    for svc in ("worker", "dispatcher"):
        text = _text(next(s for s in steps if s["id"] == f"deploy-{svc}"))
        assert f'--image="{IMAGE_PREFIX}{svc}:$COMMIT_SHA"' in text
        assert '--region="${_REGION}"' in text
        assert '"${_DEPLOY}" != "true"' in text, "bootstrap builds must be able to skip deploy"


def test_every_substitution_is_declared_and_used(build):
    declared = set(build.get("substitutions", {}))
    used: set[str] = set()
    bad: list[str] = []
    for text in _strings({k: v for k, v in build.items() if k != "substitutions"}):
        for match in SUBSTITUTION.finditer(text):
            if match.group(0) == "$$":
                continue
            name = match.group(1) or match.group(2)
            if name is None:
                bad.append(text)  # a lone "$" (e.g. "$(" or "$1"): Cloud Build rejects it
                continue
            if name.startswith("_"):
                used.add(name)
            elif name not in BUILTINS:
                bad.append(f"${name}")  # an unescaped shell variable
    assert not bad, f"unescaped $ (use $$ for shell variables): {bad}"
    assert used <= declared, f"used but not declared: {sorted(used - declared)}"
    assert declared <= used, (
        f"declared but unused (Cloud Build rejects these): {sorted(declared - used)}"
    )
    for name in ("_REGION", "_REPOSITORY", "_DISPATCHER_SERVICE", "_WORKER_SERVICE"):
        assert name in declared


def test_substitutions_documented(build, repo_root):
    header = (REPO_ROOT / "cloudbuild.yaml").read_text(encoding="utf-8").split("substitutions:")[0]
    doc = (repo_root / "docs" / "deploy.md").read_text(encoding="utf-8")
    for name in build["substitutions"]:
        assert name in header, f"{name} is not described in the header comment of cloudbuild.yaml"
        assert name in doc, f"{name} is not described in docs/deploy.md"


def test_defaults_match_terraform(build, tf):
    subs = build["substitutions"]
    prefix = tf.variables["name_prefix"]["default"]
    assert subs["_DISPATCHER_SERVICE"] == f"{prefix}-dispatcher"
    assert subs["_WORKER_SERVICE"] == f"{prefix}-worker"
    assert subs["_REPOSITORY"] == tf.variables["artifact_registry_repository"]["default"]
    assert subs["_REGION"] == tf.variables["region"]["default"]


def test_options(build):
    assert build["options"]["logging"] == "CLOUD_LOGGING_ONLY"
    assert re.fullmatch(r"\d+s", build["timeout"])
    assert int(build["timeout"][:-1]) >= 1800
