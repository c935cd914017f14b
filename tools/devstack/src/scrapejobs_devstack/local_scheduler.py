"""What Cloud Scheduler does in a deployment, for the local stack: each maintenance endpoint
POSTed at its own interval, from a thread of its own, until stopped.

``make dev`` runs the reconcile sweeps every ``RECONCILE_EVERY_S`` and the monitors' tick
every ``MONITORS_TICK_S`` (a monitor's finest schedule is a minute: its checks start within
that of their time); tests run the tick faster. In ``api_key`` mode it calls with a scheduler
key of its own (the stack mints it and gives its digest to the dispatcher:
``SCRAPEJOBS_SCHEDULER_KEY_HASHES``), and it says so when a call is refused."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

RECONCILE_EVERY_S = 30.0  # what Cloud Scheduler does every few minutes in production
MONITORS_TICK_S = 20.0


@dataclass(frozen=True, slots=True)
class ScheduledCall:
    path: str  # a maintenance endpoint of the dispatcher
    every_s: float
    # what to tell of an answer (None: nothing)
    told: Callable[[dict[str, Any]], str | None] = lambda answer: None


def reconciled(counted: str) -> Callable[[dict[str, Any]], str | None]:
    def told(answer: dict[str, Any]) -> str | None:
        return f"published {answer.get('tasks')} tasks again" if answer.get(counted) else None

    return told


def monitors_due(answer: dict[str, Any]) -> str | None:
    due = answer.get("due")
    return f"monitors: {due} due, their checks started" if due else None


DEV_CALLS = (
    ScheduledCall("/v1/maintenance/reconcile", RECONCILE_EVERY_S, reconciled("batches")),
    ScheduledCall("/v1/maintenance/republish", RECONCILE_EVERY_S, reconciled("jobs")),
    ScheduledCall("/v1/maintenance/monitors", MONITORS_TICK_S, monitors_due),
)


class LocalScheduler:
    def __init__(
        self,
        dispatcher_url: str,
        calls: Sequence[ScheduledCall] = DEV_CALLS,
        tell: Callable[[str], None] = print,
        api_key: str | None = None,
    ) -> None:
        self._url = dispatcher_url
        self._headers = {"X-API-Key": api_key} if api_key else {}
        self._refused: set[str] = set()  # the paths whose refusal was told
        self._calls = tuple(calls)
        self._tell = tell
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="local-scheduler", daemon=True)

    def start(self) -> LocalScheduler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=35)

    def _run(self) -> None:
        due = {call.path: time.monotonic() + call.every_s for call in self._calls}
        with httpx.Client(base_url=self._url, timeout=30, trust_env=False) as client:
            while not self._stopped.wait(0.2):
                for call in self._calls:
                    if time.monotonic() < due[call.path]:
                        continue
                    due[call.path] = time.monotonic() + call.every_s
                    self._call(client, call)

    def _call(self, client: httpx.Client, call: ScheduledCall) -> None:
        try:
            response = client.post(call.path, headers=self._headers)
            answer = response.json() if response.status_code == 200 else {}
        except (httpx.HTTPError, ValueError):
            return  # the next interval tries again, as Cloud Scheduler's retry would
        if response.status_code in (401, 403) and call.path not in self._refused:
            self._refused.add(call.path)
            self._tell(
                f"the dispatcher refused {call.path} ({response.status_code}): "
                "the local scheduler's key is not accepted; nothing is reconciled or ticked"
            )
        told = call.told(answer) if isinstance(answer, dict) else None
        if told:
            self._tell(told)
