"""Chromium keeps its own sandbox wherever the environment allows it: as an unprivileged user
with user namespaces (what the renderer image runs as) the browser runs sandboxed; as root,
where Chromium refuses its sandbox, "auto" renders without it and says so, and "on" refuses."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scrapejobs_worker.rendering.browser_process import (
    BrowserCrashed,
    BrowserPolicy,
    BrowserProcess,
)
from support.browser import renderer_browser_path

HELPER = Path(__file__).resolve().parents[2] / "support" / "sandboxed_render.py"
NOBODY = 65534


def _as_unprivileged_user(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(HELPER), *args]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("setpriv (util-linux) is needed to drop root")
        command = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *command]
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        command, capture_output=True, text=True, timeout=120, env=env, check=False
    )


def test_an_unprivileged_renderer_runs_chromium_in_its_sandbox(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o777)
    tmp_path.chmod(0o755)
    ran = _as_unprivileged_user(renderer_browser_path(), "auto", home=home)
    if "PermissionError" in ran.stderr and "sandboxed_render" not in ran.stderr:
        pytest.skip("this checkout or its environment is not readable by an unprivileged user")
    assert ran.returncode == 0, ran.stderr[-3000:]
    shown = json.loads(ran.stdout.strip().splitlines()[-1])
    assert shown["text"] == "rendered"
    assert shown["sandboxed"] is True
    assert "--no-sandbox" not in shown["flags"] and "--type=renderer" in shown["flags"]


@pytest.mark.skipif(os.geteuid() != 0, reason="Chromium refuses its sandbox only to root")
async def test_as_root_auto_renders_without_the_sandbox_and_on_refuses() -> None:
    auto = BrowserProcess(BrowserPolicy(renderer_browser_path(), sandbox="auto"))
    try:
        async with auto.context(10.0) as context:
            page = await context.new_page()
            await page.set_content("<p id=t>rendered</p>")
            assert await page.inner_text("#t") == "rendered"
        assert auto.sandboxed is False
    finally:
        await auto.aclose()
    required = BrowserProcess(BrowserPolicy(renderer_browser_path(), sandbox="on"))
    try:
        with pytest.raises(BrowserCrashed, match="SCRAPEJOBS_RENDER_SANDBOX=on"):
            async with required.context(10.0):
                pass
    finally:
        await required.aclose()
