"""The gcloud Pub/Sub and Firestore emulators on loopback."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from scrapejobs_devstack.processes import ManagedProcess, start_process, wait_http


@dataclass
class Emulator:
    process: ManagedProcess
    host: str  # "127.0.0.1:PORT", the value of *_EMULATOR_HOST


def _gcloud() -> str:
    gcloud = shutil.which("gcloud")
    if gcloud is None:
        raise RuntimeError("gcloud is not on PATH: install the Google Cloud CLI and emulators")
    return gcloud


def start_pubsub(port: int, project_id: str, log_dir: Path) -> ManagedProcess:
    argv = [
        _gcloud(),
        "beta",
        "emulators",
        "pubsub",
        "start",
        f"--host-port=127.0.0.1:{port}",
        f"--project={project_id}",
        "--quiet",
    ]
    return start_process("pubsub-emulator", argv, {}, log_dir)


def start_firestore(port: int, log_dir: Path) -> ManagedProcess:
    argv = [
        _gcloud(),
        "emulators",
        "firestore",
        "start",
        f"--host-port=127.0.0.1:{port}",
        "--quiet",
    ]
    return start_process("firestore-emulator", argv, {}, log_dir)


def start_emulators(
    pubsub_port: int, firestore_port: int, project_id: str, log_dir: Path
) -> tuple[Emulator, Emulator]:
    """Start both (in parallel), then wait for each to answer ``Ok``."""
    pubsub = start_pubsub(pubsub_port, project_id, log_dir)
    firestore = start_firestore(firestore_port, log_dir)
    try:
        wait_http(f"http://127.0.0.1:{pubsub_port}/", pubsub, expect="Ok")
        wait_http(f"http://127.0.0.1:{firestore_port}/", firestore, expect="Ok")
    except BaseException:
        pubsub.stop()
        firestore.stop()
        raise
    return (
        Emulator(pubsub, f"127.0.0.1:{pubsub_port}"),
        Emulator(firestore, f"127.0.0.1:{firestore_port}"),
    )
