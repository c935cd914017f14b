"""A stack of its own on the suite's emulators: its own project (its own topics, jobs, host and
worker documents) and its own environment, so nothing it is sent reaches another test's jobs.
``lone_dispatcher``: a dispatcher whose push endpoint nobody listens on (what it is sent is
stored and published, never fetched); ``lone_stack``: a dispatcher and a worker."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from scrapejobs_devstack.processes import free_port
from scrapejobs_devstack.stack import Stack, StackConfig
from scrapejobs_devstack.topology_bootstrap import ensure_topology, remove_topology
from scrapejobs_shared.messaging.topology import Topology


@contextmanager
def lone_dispatcher(
    stack: Stack, project_id: str, log_dir: Path, env: Mapping[str, str]
) -> Iterator[str]:
    """Start it; yields its base URL; stops it (by its pid) on the way out."""
    with lone_stack(stack, project_id, log_dir, env, worker_processes=0) as lone:
        yield lone.config.dispatcher_url


@contextmanager
def lone_stack(
    stack: Stack,
    project_id: str,
    log_dir: Path,
    env: Mapping[str, str] | None = None,
    worker_processes: int = 1,
    worker_env: Mapping[str, str] | None = None,
    topology: Topology | None = None,
) -> Iterator[Stack]:
    """A dispatcher and (unless ``worker_processes`` is 0) a worker of that many processes;
    yields the Stack (its config has the URLs); stops what it started, by pid, and deletes its
    project's topics and subscriptions (nothing is pushed to its ports once it stopped)."""
    config = StackConfig(
        project_id=project_id,
        dispatcher_port=free_port(),
        worker_port=free_port(),
        log_dir=log_dir,
        topology=topology or stack.config.topology,
        render_browser=None,
        dispatcher_env=dict(env or {}),
        worker_env={**stack.config.worker_env, **(worker_env or {})},
        worker_processes=max(worker_processes, 1),
    )
    lone = Stack(config, pubsub=stack.pubsub, firestore=stack.firestore, storage=stack.storage)
    # with no worker, the push endpoint is a port nobody listens on
    push_to = config.worker_url if worker_processes else f"http://127.0.0.1:{free_port()}"
    ensure_topology(config.project_id, push_to, config.topology)
    try:
        if worker_processes:
            lone.start_worker()
        lone.start_dispatcher()
        yield lone
    finally:  # its own processes and topology only: the emulators are the suite's
        for process in (lone.dispatcher, lone.worker):
            if process is not None:
                process.stop()
        remove_topology(config.project_id)
