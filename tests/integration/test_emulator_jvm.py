"""The emulators' JVMs run as emulators.py says (the flags reach the Java processes gcloud
starts, not only gcloud's own Python)."""

from __future__ import annotations

import psutil

from scrapejobs_devstack.emulators import JVM_OPTIONS
from scrapejobs_devstack.stack import Stack


def _java_options(pid: int) -> list[str]:
    javas = [p for p in psutil.Process(pid).children(recursive=True) if p.name().startswith("java")]
    assert javas, "the emulator's JVM was not found under its gcloud process"
    return [p.environ().get("JAVA_TOOL_OPTIONS", "") for p in javas]


def test_both_emulators_jvms_run_with_the_stacks_options(stack: Stack) -> None:
    assert stack.firestore is not None and stack.pubsub is not None
    for emulator in (stack.firestore, stack.pubsub):
        for options in _java_options(emulator.process.pid):
            assert all(flag in options.split() for flag in JVM_OPTIONS), options
