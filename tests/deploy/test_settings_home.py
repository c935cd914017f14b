"""One home per setting: a service's setting (its settings class: name, default, bounds,
description) is what Terraform's variable that feeds it says too. Every ``SCRAPEJOBS_*``
variable Terraform sets names a real setting; a variable's validation has the bounds of the
settings it feeds (the narrowest, when it feeds several) and its default is theirs, but where a
deployment's default differs on purpose (listed below, with why)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from annotated_types import Ge, Gt, Le, Lt
from pydantic.fields import FieldInfo

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_worker.settings import WorkerSettings

# ``SCRAPEJOBS_X = var.y`` or ``= tostring(var.y)`` in a Terraform file
FED = re.compile(r"^\s*(SCRAPEJOBS_[A-Z0-9_]+)\s*=\s*(?:tostring\()?var\.([a-z0-9_]+)\)?\s*$", re.M)
BOUND = {">=": "ge", ">": "gt", "<=": "le", "<": "lt"}
FLIPPED = {">=": "le", ">": "lt", "<=": "ge", "<": "gt"}

# a deployment's default that is not the setting's, on purpose
DEPLOYED_DEFAULTS = {
    "telemetry_exporter": "a deployment exports to Cloud Trace and Monitoring; make dev exports "
    "nothing",
}
# a variable narrower than its setting, where a rule across settings bounds it
NARROWER = {
    "max_upload_bytes": "at most max_body_bytes less 64 KiB (a check across the two settings): "
    "its bound is that of max_body_bytes' default",
}


def _settings() -> dict[str, FieldInfo]:
    fields: dict[str, FieldInfo] = {}
    for settings in (DispatcherSettings, WorkerSettings):
        for name, info in settings.model_fields.items():
            fields.setdefault(f"SCRAPEJOBS_{name.upper()}", info)
    return fields


def _fed(terraform_dir: Path) -> dict[str, set[str]]:
    """Each variable and the settings it feeds."""
    fed: dict[str, set[str]] = {}
    for path in terraform_dir.glob("*.tf"):
        for env, variable in FED.findall(path.read_text()):
            fed.setdefault(variable, set()).add(env)
    return fed


def _bounds(info: FieldInfo) -> dict[str, float]:
    found: dict[str, float] = {}
    for item in info.metadata:
        for key, kind in (("ge", Ge), ("gt", Gt), ("le", Le), ("lt", Lt)):
            if isinstance(item, kind):
                found[key] = float(getattr(item, key))
    return found


def _narrowest(bounds: list[dict[str, float]]) -> dict[str, float]:
    found: dict[str, float] = {}
    for each in bounds:
        for key, value in each.items():
            keep = max if key in ("ge", "gt") else min
            found[key] = keep(found.get(key, value), value)
    return found


def _validated(variable: str, block: dict[str, Any]) -> dict[str, float]:
    validations = block.get("validation") or []
    found: dict[str, float] = {}
    for validation in validations if isinstance(validations, list) else [validations]:
        condition = str(validation.get("condition", ""))
        for op, number in re.findall(rf"var\.{variable}\s*(>=|<=|>|<)\s*(-?[0-9.]+)", condition):
            found[BOUND[op]] = float(number)
        for number, op in re.findall(rf"(-?[0-9.]+)\s*(>=|<=|>|<)\s*var\.{variable}\b", condition):
            found[FLIPPED[op]] = float(number)
    return found


def _same(deployed: Any, default: Any) -> bool:
    if deployed is None:  # a variable without a default: the deployment must say
        return True
    if deployed == "" and default is None:  # unset either way
        return True
    if isinstance(default, bool) or isinstance(deployed, bool):
        return str(deployed).lower() == str(default).lower()
    try:
        return float(deployed) == float(default)
    except (TypeError, ValueError):
        return str(deployed) == str(default)


def test_every_variable_feeding_a_setting_has_its_bounds_and_default(tf, terraform_dir) -> None:
    settings = _settings()
    fed = _fed(terraform_dir)
    assert len(fed) > 40  # they were found
    unknown = sorted(env for envs in fed.values() for env in envs if env not in settings)
    assert unknown == [], "Terraform sets these, and no service reads them"
    wrong = []
    for variable, envs in sorted(fed.items()):
        block = tf.variables[variable]
        own = _narrowest([_bounds(settings[env]) for env in envs])
        if variable not in NARROWER and _validated(variable, block) != own:
            wrong.append(f"{variable}: validated {_validated(variable, block)}, settings {own}")
        defaults = {settings[env].default for env in envs}
        if variable not in DEPLOYED_DEFAULTS and not any(
            _same(block.get("default"), default) for default in defaults
        ):
            wrong.append(f"{variable}: default {block.get('default')!r}, settings {defaults}")
    assert wrong == []


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ("var.x >= 1 && var.x <= 64", {"ge": 1.0, "le": 64.0}),
        ("0 < var.x && var.x < 2.5", {"gt": 0.0, "lt": 2.5}),
        ("contains([1, 2], var.x)", {}),
    ],
)
def test_a_validation_s_bounds_are_read_as_written(condition: str, expected: dict) -> None:
    assert _validated("x", {"validation": [{"condition": condition}]}) == expected
