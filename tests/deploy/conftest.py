"""Shared fixtures for the deployment tests (Terraform, the Dockerfile, Cloud Build).

Terraform is parsed with checkov's hcl2 (``bc-python-hcl2``, a python-hcl2 fork). The output
format of the hcl2 parsers changed across releases (python-hcl2 v8 keeps
string quotes and marks blocks with ``__is_block__``; older releases and the
``bc-python-hcl2`` fork that checkov depends on wrap every attribute in a one-element list
and add line numbers). ``_normalise`` maps all of them onto one canonical form:

* string literals unquoted (``"scrape-tasks"`` -> ``scrape-tasks``), expressions as
  ``${...}`` (``${var.task_topic}``), interpolated strings as written
  (``${google_cloud_run_v2_service.worker.uri}/pubsub/push``);
* blocks as lists of dicts; attributes as plain values.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import textwrap
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
TERRAFORM_DIR = REPO_ROOT / "terraform"


def _is_meta(key: str) -> bool:
    # __is_block__, __start_line__, __end_line__, __comments__, __inline_comments__, ...
    return key.startswith("__") and key.endswith("__")


_HEREDOC = re.compile(r"\A<<(-?)([A-Za-z_][A-Za-z0-9_]*)\n(.*?)\n?[ \t]*\2\s*\Z", re.DOTALL)


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
        value = value[1:-1]
    heredoc = _HEREDOC.match(value)
    if heredoc:  # python-hcl2 8 returns heredocs verbatim, markers included
        body = heredoc.group(3)
        return textwrap.dedent(body) if heredoc.group(1) else body
    return value


def _normalise(value: Any, *, legacy: bool) -> Any:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if _is_meta(key):
                continue
            if (
                legacy
                and isinstance(item, list)
                and len(item) == 1
                and not isinstance(item[0], dict)
            ):
                # Old format: every attribute value is wrapped in a one-element list.
                item = item[0]
            out[_unquote(key)] = _normalise(item, legacy=legacy)
        return out
    if isinstance(value, list):
        return [_normalise(v, legacy=legacy) for v in value]
    if isinstance(value, str):
        return _unquote(value)
    return value


def _is_legacy(raw: Any) -> bool:
    text = repr(raw)
    return "__is_block__" not in text


def parse_hcl(text: str) -> dict[str, Any]:
    """Parse HCL text into the canonical form described in the module docstring."""
    try:
        import hcl2
    except ImportError as exc:  # pragma: no cover - environment problem, reported loudly
        pytest.fail(f"python-hcl2 is not importable ({exc}); run `uv sync`")
    raw = hcl2.loads(text)
    result = _normalise(raw, legacy=_is_legacy(raw))
    assert isinstance(result, dict)
    return result


def as_map(value: Any) -> dict[str, Any]:
    """A map attribute (`{ a = 1 }`): a dict, or a one-element list of one in old formats."""
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        value = value[0]
    assert isinstance(value, dict), f"expected a map, got {value!r}"
    return value


def block(body: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The single nested block `name` of a resource/block body."""
    blocks = blocks_of(body, name)
    assert len(blocks) == 1, f"expected exactly one {name!r} block, found {len(blocks)}"
    return blocks[0]


def blocks_of(body: Mapping[str, Any], name: str) -> list[dict[str, Any]]:
    value = body.get(name, [])
    if isinstance(value, dict):
        value = [value]
    assert isinstance(value, list)
    return [b for b in value if isinstance(b, dict)]


def strip_expr(value: Any) -> Any:
    """`${var.x}` -> `var.x` for whole-expression strings; anything else unchanged."""
    if isinstance(value, str) and value.startswith("${") and value.endswith("}"):
        inner = value[2:-1]
        if "${" not in inner:
            return inner
    return value


@dataclass
class TerraformConfig:
    """All terraform/*.tf files of the root module, parsed."""

    files: dict[str, str]
    resources: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    data: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    variables: dict[str, dict[str, Any]] = field(default_factory=dict)
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    locals: dict[str, Any] = field(default_factory=dict)
    terraform_blocks: list[dict[str, Any]] = field(default_factory=list)
    resource_files: dict[tuple[str, str], str] = field(default_factory=dict)
    moved: dict[str, str] = field(default_factory=dict)  # from address -> to address

    def resource(self, rtype: str, name: str) -> dict[str, Any]:
        key = (rtype, name)
        assert key in self.resources, f"resource {rtype}.{name} is not defined"
        return self.resources[key]

    def of_type(self, rtype: str) -> dict[str, dict[str, Any]]:
        return {n: body for (t, n), body in self.resources.items() if t == rtype}

    def iter_resources(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        for (rtype, name), body in self.resources.items():
            yield rtype, name, body

    @property
    def text(self) -> str:
        return "\n".join(self.files.values())


def load_terraform(directory: Path = TERRAFORM_DIR) -> TerraformConfig:  # noqa: C901 (HCL kinds)
    files = {p.name: p.read_text(encoding="utf-8") for p in sorted(directory.glob("*.tf"))}
    config = TerraformConfig(files=files)
    for fname, text in files.items():
        parsed = parse_hcl(text)
        for entry in parsed.get("resource", []):
            for rtype, named in entry.items():
                for name, body in named.items():
                    key = (rtype, name)
                    assert key not in config.resources, f"duplicate resource {rtype}.{name}"
                    config.resources[key] = body
                    config.resource_files[key] = fname
        for entry in parsed.get("data", []):
            for dtype, named in entry.items():
                for name, body in named.items():
                    config.data[(dtype, name)] = body
        for entry in parsed.get("variable", []):
            for name, body in entry.items():
                assert name not in config.variables, f"duplicate variable {name}"
                config.variables[name] = body
        for entry in parsed.get("output", []):
            for name, body in entry.items():
                assert name not in config.outputs, f"duplicate output {name}"
                config.outputs[name] = body
        for entry in parsed.get("locals", []):
            config.locals.update(entry)
        config.terraform_blocks.extend(parsed.get("terraform", []))
        for entry in parsed.get("moved", []):
            source, target = strip_expr(entry["from"]), strip_expr(entry["to"])
            assert source not in config.moved, f"two moved blocks from {source}"
            config.moved[source] = target
    return config


_WS = re.compile(r"\s+")


def squash(text: str) -> str:
    """Collapse whitespace and unify quotes, for substring checks on expressions."""
    return _WS.sub("", text).replace("'", '"')


class Helpers:
    """The helper functions above, handed to tests as the ``h`` fixture.

    (Test modules cannot import conftest reliably: pytest loads every conftest.py under the
    module name "conftest", and mypy does not resolve it.)
    """

    parse_hcl = staticmethod(parse_hcl)
    as_map = staticmethod(as_map)
    block = staticmethod(block)
    blocks_of = staticmethod(blocks_of)
    strip_expr = staticmethod(strip_expr)
    load_terraform = staticmethod(load_terraform)
    squash = staticmethod(squash)


@pytest.fixture(scope="session")
def h() -> Helpers:
    return Helpers()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def terraform_dir() -> Path:
    return TERRAFORM_DIR


@pytest.fixture(scope="session")
def tf() -> TerraformConfig:
    return load_terraform()


TERRAFORM = shutil.which("terraform")

# Only variables are referenced by these files, so `terraform console` evaluates them without
# `terraform init` or any provider (the Google provider is not available offline).
PROVIDER_FREE_FILES = ("variables.tf", "lanes.tf")
REQUIRED_VARS = {"project_id": "p", "dispatcher_image": "d", "worker_image": "w"}

Evaluate = Callable[..., Any]


@pytest.fixture(scope="session")
def tf_eval(tmp_path_factory: pytest.TempPathFactory) -> Evaluate:
    """``tf_eval("local.lane_names", dedicated_lane_workers={...})``: the value of an
    expression over terraform/variables.tf and terraform/lanes.tf, with those variables set."""
    if TERRAFORM is None:
        pytest.skip("terraform CLI not installed: Terraform expressions cannot be evaluated")
    workdir = tmp_path_factory.mktemp("tf-eval")
    for name in PROVIDER_FREE_FILES:
        shutil.copy(TERRAFORM_DIR / name, workdir / name)

    def evaluate(expression: str, **variables: Any) -> Any:
        assert TERRAFORM is not None
        args = [TERRAFORM, "console"]
        for name, value in {**REQUIRED_VARS, **variables}.items():
            args += ["-var", f"{name}={value if isinstance(value, str) else json.dumps(value)}"]
        result = subprocess.run(
            args,
            input=f"jsonencode({expression})\n",
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1"},
            check=False,
        )
        assert result.returncode == 0, f"terraform console failed:\n{result.stderr}"
        return json.loads(json.loads(result.stdout.strip().splitlines()[-1]))

    return evaluate
