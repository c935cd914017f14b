"""A dispatcher of its own on the suite's emulators: its own project (its own topics, jobs and
host documents), its own environment, and a push endpoint nobody listens on, so what it is sent
is stored and published but never fetched, and no other test's jobs are within its reach."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from scrapejobs_devstack.processes import free_port
from scrapejobs_devstack.stack import Stack, StackConfig
from scrapejobs_devstack.topology_bootstrap import ensure_topology


@contextmanager
def lone_dispatcher(
    stack: Stack, project_id: str, log_dir: Path, env: Mapping[str, str]
) -> Iterator[str]:
    """Start it; yields its base URL; stops it (by its pid) on the way out."""
    config = StackConfig(
        project_id=project_id,
        dispatcher_port=free_port(),
        log_dir=log_dir,
        topology=stack.config.topology,
        render_browser=None,
        dispatcher_env=dict(env),
    )
    lone = Stack(config, pubsub=stack.pubsub, firestore=stack.firestore)
    ensure_topology(config.project_id, f"http://127.0.0.1:{free_port()}", config.topology)
    lone.start_dispatcher()
    assert lone.dispatcher is not None
    try:
        yield config.dispatcher_url
    finally:
        lone.dispatcher.stop()
