"""The gcloud Pub/Sub and Firestore emulators, and a Cloud Storage emulator, on loopback."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from scrapejobs_devstack.processes import ManagedProcess, start_process, wait_http


@dataclass
class Emulator:
    process: ManagedProcess
    host: str  # "127.0.0.1:PORT", the value of *_EMULATOR_HOST


# The emulators are Java programs that live as long as a stack: a test session, a bench round,
# a `make dev` afternoon. With the JVM's defaults, HotSpot's optimizing compiler (C2) spent about
# two thirds of the Firestore emulator's CPU compiling while a 5,000-page job ran on a new stack,
# and its code did not pay that back within 25,000 pages (bench/README.md, "The emulators' JIT").
# The first tier's compiler alone (C1, as IDEs and build daemons run) costs a third as much over
# one job and less over five. Production has no emulator: Firestore and Pub/Sub are services.
JVM_OPTIONS = ("-XX:TieredStopAtLevel=1",)


def jvm_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``JAVA_TOOL_OPTIONS`` for the emulators' JVMs: ours first, then the environment's own
    (HotSpot takes the last of a repeated flag: ``-XX:TieredStopAtLevel=4`` there restores
    the JVM's defaults)."""
    own = (os.environ if environ is None else environ).get("JAVA_TOOL_OPTIONS", "")
    return {"JAVA_TOOL_OPTIONS": " ".join([*JVM_OPTIONS, own]).strip()}


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
    return start_process("pubsub-emulator", argv, jvm_env(), log_dir)


def start_firestore(port: int, log_dir: Path) -> ManagedProcess:
    argv = [
        _gcloud(),
        "emulators",
        "firestore",
        "start",
        f"--host-port=127.0.0.1:{port}",
        "--quiet",
    ]
    return start_process("firestore-emulator", argv, jvm_env(), log_dir)


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


def start_storage(port: int, bucket: str, log_dir: Path) -> Emulator:
    """The Cloud Storage emulator (gcp-storage-emulator, a Python program: Google ships none),
    in memory, with ``bucket`` made; ready once it answers."""
    emulator = str(Path(sys.executable).parent / "gcp-storage-emulator")
    argv = [emulator, "start", "--host=127.0.0.1", f"--port={port}", "--in-memory", "--quiet"]
    argv.append(f"--default-bucket={bucket}")
    process = start_process("storage-emulator", argv, {}, log_dir)
    try:
        wait_http(f"http://127.0.0.1:{port}/storage/v1/b/{bucket}", process, expect=bucket)
    except BaseException:
        process.stop()
        raise
    return Emulator(process, f"127.0.0.1:{port}")
