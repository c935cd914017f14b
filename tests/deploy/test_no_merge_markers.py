"""No file in the repository holds a leftover merge-conflict marker."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MARKERS = ("<<<<<<< ", ">>>>>>> ")


def test_no_tracked_file_holds_a_conflict_marker() -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    found = []
    for name in filter(None, listed):
        path = ROOT / name.decode()
        if not path.is_file() or path.suffix in (".png", ".ico", ".woff2"):
            continue
        text = path.read_bytes().decode("utf-8", errors="ignore")
        found += [
            f"{name.decode()}:{n}"
            for n, line in enumerate(text.splitlines(), 1)
            if line.startswith(MARKERS)
        ]
    assert found == []
