"""`terraform fmt` must report no changes (the same check a reviewer's editor applies)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

TERRAFORM = shutil.which("terraform")


@pytest.mark.skipif(
    TERRAFORM is None,
    reason="terraform CLI not installed: `terraform fmt -check` cannot run "
    "(install Terraform >= 1.6)",
)
def test_terraform_fmt_check(terraform_dir):
    assert TERRAFORM is not None
    env = {**os.environ, "TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1"}
    result = subprocess.run(
        [TERRAFORM, "fmt", "-check", "-recursive", "-diff", str(terraform_dir)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert result.returncode == 0, (
        "terraform fmt found unformatted files; run `terraform fmt -recursive terraform`\n"
        f"{result.stdout}\n{result.stderr}"
    )
