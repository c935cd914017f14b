"""Structural checks of the service images (there is no Docker engine in CI).

One Dockerfile at the repository root builds every image (``--build-arg SERVICE=...``); it is
read once per service, ``${SERVICE}`` resolved, parsed into instructions and checked for the
properties that matter in production: pinned slim base, multi-stage, dependencies from the lock
only (no dev deps), non-root runtime user, listens on $PORT, only the needed paths copied. The
.dockerignore is evaluated with Docker's matching rules.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVICES = ["dispatcher", "worker"]
DOCKERFILE = REPO_ROOT / "Dockerfile"


def dockerfile_for(service: str) -> list[Instruction]:
    """The Dockerfile as ``--build-arg SERVICE=<service>`` builds it."""
    text = DOCKERFILE.read_text(encoding="utf-8")
    return parse_dockerfile(re.sub(r"\$\{?SERVICE\}?", service, text))


@dataclass(frozen=True)
class Instruction:
    keyword: str
    value: str
    stage: int  # index of the FROM this instruction belongs to (-1: before the first FROM)


def parse_dockerfile(text: str) -> list[Instruction]:
    """Split a Dockerfile into instructions (comments dropped, continuations joined)."""
    instructions: list[Instruction] = []
    stage = -1
    buffer = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not buffer and (not line or line.startswith("#")):
            continue
        if buffer and line.startswith("#"):
            continue  # comment inside a continued instruction
        if line.endswith("\\"):
            buffer += line[:-1] + " "
            continue
        buffer += line
        keyword, _, value = buffer.strip().partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            stage += 1
        instructions.append(Instruction(keyword, value.strip(), stage))
        buffer = ""
    assert not buffer, "dangling line continuation"
    return instructions


def _args(instructions: list[Instruction]) -> dict[str, str]:
    """Defaults of ARGs declared before the first FROM (usable in FROM lines)."""
    out: dict[str, str] = {}
    for ins in instructions:
        if ins.keyword == "ARG" and ins.stage == -1 and "=" in ins.value:
            key, _, default = ins.value.partition("=")
            out[key.strip()] = default.strip()
    return out


def _resolve(value: str, args: dict[str, str]) -> str:
    return re.sub(r"\$\{?(\w+)\}?", lambda m: args.get(m.group(1), m.group(0)), value)


@pytest.fixture(scope="module", params=SERVICES)
def service(request) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def dockerfile(service) -> list[Instruction]:
    return dockerfile_for(service)


def test_one_dockerfile_builds_every_service() -> None:
    assert DOCKERFILE.is_file()
    assert sorted(REPO_ROOT.glob("services/*/Dockerfile")) == [], "one Dockerfile, at the root"
    text = DOCKERFILE.read_text(encoding="utf-8")
    assert "ARG SERVICE\n" in text, "SERVICE has no default: a build must name its service"
    assert 'case "${SERVICE}" in dispatcher|worker) ;;' in text, "an unknown SERVICE fails"


def _stages(instructions: list[Instruction]) -> int:
    return max(i.stage for i in instructions) + 1


def _service_stages(instructions: list[Instruction]) -> set[int]:
    """The stages that run a service (they end in a CMD): the runtime, last, and the worker
    Dockerfile's renderer (``--target renderer``)."""
    return {i.stage for i in instructions if i.keyword in {"CMD", "ENTRYPOINT"}}


def _final(instructions: list[Instruction]) -> list[Instruction]:
    last = _stages(instructions) - 1
    return [i for i in instructions if i.stage == last]


def test_multi_stage_with_pinned_slim_python_base(dockerfile):
    args = _args(dockerfile)
    froms = [_resolve(i.value, args) for i in dockerfile if i.keyword == "FROM"]
    assert len(froms) >= 2, "expected a builder and a runtime stage"
    for line in froms:
        image = line.split()[0]
        assert re.fullmatch(
            r"python:3\.11(\.\d+)?-slim(-bookworm|-trixie)?(@sha256:[0-9a-f]{64})?", image
        ), f"base image {image!r} is not a pinned python:3.11 slim image"
    # Builder and runtime share one base so the copied venv's interpreter exists.
    assert len({line.split()[0] for line in froms}) == 1
    assert froms[-1].split()[-1] == "runtime"


def test_runtime_runs_as_non_root(dockerfile):
    users = [i for i in dockerfile if i.keyword == "USER"]
    assert users, "no USER instruction"
    last_user = users[-1]
    assert last_user.stage == _stages(dockerfile) - 1, "USER must be set in the runtime stage"
    assert last_user.value.split(":")[0] not in {"root", "0"}
    assert last_user.value.split(":")[0] == "10001"
    # No instruction after USER may switch back or need root.
    after = dockerfile[dockerfile.index(last_user) + 1 :]
    assert all(i.keyword not in {"USER", "RUN"} for i in after)
    created = " ".join(i.value for i in _final(dockerfile) if i.keyword == "RUN")
    assert "--uid 10001" in created


def test_dependencies_come_from_the_lock_without_dev_tools(dockerfile, service):
    runs = " ".join(i.value for i in dockerfile if i.keyword == "RUN")
    assert "uv export" in runs
    assert "--frozen" in runs, "the lock must be used as is"
    assert "--no-dev" in runs
    assert re.search(r"(?<!no)-{1,2}dev\b", runs.replace("--no-dev", "")) is None
    assert f"--package scrapejobs-{service}" in runs
    assert "--no-emit-workspace" in runs
    assert "--require-hashes" in runs
    assert "uv sync" not in runs or "--no-dev" in runs
    for tool in ("pytest", "mypy", "ruff", "checkov", "terraform"):
        assert tool not in runs, f"{tool} must not be installed in the image"
    for fetch in ("curl ", "wget ", "git clone"):
        assert fetch not in runs


def test_tool_versions_are_pinned(dockerfile):
    args = {
        i.value.partition("=")[0]: i.value.partition("=")[2]
        for i in dockerfile
        if i.keyword == "ARG"
    }
    assert re.fullmatch(r"\d+\.\d+\.\d+", args.get("UV_VERSION", "")), "uv must be pinned"
    assert re.fullmatch(r"\d+\.\d+\.\d+", args.get("HATCHLING_VERSION", ""))
    runs = " ".join(i.value for i in dockerfile if i.keyword == "RUN")
    assert '"uv==${UV_VERSION}"' in runs


def test_no_remote_add_and_only_needed_copies(dockerfile, service):
    assert not [i for i in dockerfile if i.keyword == "ADD"], "use COPY, never ADD"
    allowed = {
        "pyproject.toml",
        "uv.lock",
        "shared/pyproject.toml",
        "shared/src",
        "libs/web/pyproject.toml",
        "libs/web/src",
        "services/dispatcher/pyproject.toml",
        "services/worker/pyproject.toml",
        "tools/devstack/pyproject.toml",
        f"services/{service}/src",
    }
    for ins in (i for i in dockerfile if i.keyword == "COPY"):
        parts = shlex.split(ins.value)
        if any(p.startswith("--from=") for p in parts):
            assert ins.stage in _service_stages(dockerfile)
            assert parts[1:] in (["/opt/venv", "/opt/venv"], ["/opt/render-venv"] * 2)
            continue
        sources = [p for p in parts[:-1] if not p.startswith("--")]
        for src in sources:
            assert src.rstrip("/") in allowed, f"COPY of {src!r} is not needed in the image"
            assert (REPO_ROOT / src).exists(), f"COPY source {src} does not exist"
    runtime_copies = [i for i in _final(dockerfile) if i.keyword == "COPY"]
    assert all("--from=builder" in i.value for i in runtime_copies), (
        "the runtime stage may only copy the built venv"
    )


def test_listens_on_port_env(dockerfile, service):
    cmd = [i for i in dockerfile if i.keyword in {"CMD", "ENTRYPOINT"}]
    assert cmd and cmd[-1].stage == _stages(dockerfile) - 1
    argv = json.loads(cmd[-1].value)  # exec form
    assert isinstance(argv, list)
    assert argv[:2] == ["sh", "-c"], "a shell is needed to expand $PORT"
    script = argv[2]
    assert script.startswith("exec "), "exec so uvicorn is PID 1 and gets SIGTERM"
    # a main script is run again in every process multiprocessing starts (the extraction
    # processes); a `__main__` module is not
    assert script.startswith("exec python -m uvicorn ")
    assert "${PORT:-8080}" in script
    assert "--host 0.0.0.0" in script
    assert '--factory "${APP_FACTORY}"' in script
    exposes = [(i.stage, i.value) for i in dockerfile if i.keyword == "EXPOSE"]
    assert exposes == [(stage, "8080") for stage in sorted(_service_stages(dockerfile))]
    env = " ".join(i.value for i in _final(dockerfile) if i.keyword == "ENV")
    assert "PYTHONUNBUFFERED=1" in env
    assert f"APP_FACTORY=scrapejobs_{service}.main:app_from_env" in env


# --- .dockerignore -----------------------------------------------------------------------------


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    """Docker/moby pattern syntax: `*` and `?` stop at `/`, `**` spans directories."""
    out = ""
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            if pattern[i : i + 2] == "**":
                if pattern[i : i + 3] == "**/":
                    out += "(?:.*/)?"
                    i += 3
                    continue
                out += ".*"
                i += 2
                continue
            out += "[^/]*"
        elif c == "?":
            out += "[^/]"
        elif c == "[":
            end = pattern.index("]", i)
            out += pattern[i : end + 1]
            i = end
        else:
            out += re.escape(c)
        i += 1
    return re.compile(out + r"\Z")


def dockerignore_excludes(rules: list[str], path: str) -> bool:
    """True when `path` is excluded from the build context (last matching rule wins)."""
    excluded = False
    parts = path.split("/")
    prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    for rule in rules:
        negate = rule.startswith("!")
        pattern = rule[1:] if negate else rule
        pattern = pattern.strip().strip("/")
        if pattern.startswith("./"):
            pattern = pattern[2:]
        regex = _pattern_regex(pattern)
        # A pattern that matches a parent directory matches everything below it.
        if any(regex.match(prefix) for prefix in prefixes):
            excluded = not negate
    return excluded


@pytest.fixture(scope="module")
def dockerignore_rules() -> list[str]:
    path = REPO_ROOT / ".dockerignore"
    assert path.is_file(), ".dockerignore is missing"
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_dockerignore_matcher_semantics():
    rules = ["*", "!keep/", "**/__pycache__"]
    assert dockerignore_excludes(rules, "other.txt")
    assert not dockerignore_excludes(rules, "keep/a/b.py")
    assert dockerignore_excludes(rules, "keep/a/__pycache__/b.pyc")


@pytest.mark.parametrize(
    "path",
    [
        ".git/HEAD",
        ".venv/bin/python",
        "tests/unit/test_something.py",
        "tests/deploy/test_dockerfiles.py",
        "terraform/main.tf",
        "bench/run.py",
        "docs/deploy.md",
        "README.md",
        "cloudbuild.yaml",
        ".env",
        "tools/devstack/src/scrapejobs_devstack/stack.py",
        "shared/src/scrapejobs_shared/__pycache__/topology.cpython-311.pyc",
        ".mypy_cache/3.11/x.json",
        ".pytest_cache/v/cache",
    ],
)
def test_dockerignore_excludes(dockerignore_rules, path):
    assert dockerignore_excludes(dockerignore_rules, path), f"{path} would be sent to Docker"


def test_dockerignore_keeps_everything_the_dockerfiles_copy(dockerignore_rules):
    needed = [
        "pyproject.toml",
        "uv.lock",
        "shared/pyproject.toml",
        "libs/web/pyproject.toml",
        "services/dispatcher/pyproject.toml",
        "services/worker/pyproject.toml",
        "tools/devstack/pyproject.toml",
    ]
    src_roots = ("shared/src", "libs/web/src", "services/dispatcher/src", "services/worker/src")
    for src_root in src_roots:
        files = [
            p.relative_to(REPO_ROOT).as_posix()
            for p in (REPO_ROOT / src_root).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        ]
        assert files, f"{src_root} is empty"
        needed.extend(files)
    excluded = [p for p in needed if dockerignore_excludes(dockerignore_rules, p)]
    assert not excluded, f".dockerignore drops files the images need: {excluded}"


def test_uv_version_matches_cloudbuild():
    import yaml

    cloudbuild = yaml.safe_load((REPO_ROOT / "cloudbuild.yaml").read_text(encoding="utf-8"))
    uv_version = str(cloudbuild["substitutions"]["_UV_VERSION"])
    text = DOCKERFILE.read_text(encoding="utf-8")
    assert f"ARG UV_VERSION={uv_version}" in text, "the Dockerfile uses another uv"


def test_the_renderer_image_is_the_worker_with_debians_chromium() -> None:
    """``--target renderer``: the worker's code and lock with the render extra (Playwright),
    Chromium from Debian (never a browser download), non-root, the browser path set."""
    dockerfile = dockerfile_for("worker")
    stages = {i.value.split()[-1]: i.stage for i in dockerfile if i.keyword == "FROM"}
    renderer = [i for i in dockerfile if i.stage == stages["renderer"]]
    runs = " ".join(i.value for i in renderer if i.keyword == "RUN")
    assert "apt-get install" in runs and " chromium-headless-shell" in runs
    assert "playwright install" not in " ".join(i.value for i in dockerfile)
    env = " ".join(i.value for i in renderer if i.keyword == "ENV")
    assert "SCRAPEJOBS_RENDER_BROWSER_PATH=/usr/bin/chromium-headless-shell" in env
    assert "APP_FACTORY=scrapejobs_worker.main:app_from_env" in env
    assert [i.value for i in renderer if i.keyword == "USER"] == ["10001:10001"]
    builder = " ".join(i.value for i in dockerfile if i.stage == stages["builder"])
    assert "--extra render" in builder and "--require-hashes" in builder
    assert stages["runtime"] == max(stages.values())  # the default target stays the worker
