"""The freeze is the fork server's alone: a process that imports the module otherwise, even
one started as ``python -c`` (as the fork server is) with the fork server's module loaded,
keeps collecting its objects. (That the fork server does freeze: the extraction processes'
integration test.)"""

from __future__ import annotations

import gc
import subprocess
import sys

from scrapejobs_shared.processes import fork_server_freeze


def test_importing_it_here_freezes_nothing() -> None:
    assert not fork_server_freeze.in_fork_server()
    assert gc.get_freeze_count() == 0


def test_a_python_c_process_with_the_fork_server_module_is_not_frozen() -> None:
    script = (
        "import gc, multiprocessing.forkserver, scrapejobs_shared.processes.fork_server_freeze; "
        "print(gc.get_freeze_count())"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "0"
