"""The local stack's subscriptions on the real Pub/Sub emulator lose nothing: a push that
fails is delivered again until it is acknowledged or dead-lettered, whatever happened to the
subscription's earlier messages (topology_bootstrap.py: the emulator's own retry policy loses
messages in both cases below). The endpoint is a loopback HTTP server standing in for the
worker, on a project of its own."""

from __future__ import annotations

import base64
import dataclasses
import json
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from google.cloud import pubsub_v1

from scrapejobs_devstack.processes import free_port
from scrapejobs_devstack.stack import Stack
from scrapejobs_devstack.topology_bootstrap import (
    EMULATOR_TOPOLOGY,
    ensure_topology,
    remove_topology,
)
from scrapejobs_shared.messaging.topology import DEAD_LETTER_PATH, PUSH_PATH, in_lane

TOPOLOGY = dataclasses.replace(EMULATOR_TOPOLOGY, ack_deadline_s=10, max_delivery_attempts=5)
LANE = "normal"

Answer = Callable[[str, int], tuple[int, float]]  # (data, delivery) -> (status, delay_s)


class Endpoint:
    """Counts deliveries per path and message; answers as ``answer`` says."""

    def __init__(self, port: int, answer: Answer) -> None:
        self.port, self.answer = port, answer
        self.deliveries: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def listen(self) -> None:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                data = base64.b64decode(body["message"]["data"]).decode()
                with endpoint._lock:
                    endpoint.deliveries[(self.path, data)] += 1
                    delivery = endpoint.deliveries[(self.path, data)]
                status, delay_s = endpoint.answer(data, delivery)
                if self.path != PUSH_PATH:
                    status, delay_s = 204, 0.0  # dead letters are taken
                time.sleep(delay_s)
                self.send_response(status)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def count(self, path: str, data: str) -> int:
        with self._lock:
            return self.deliveries[(path, data)]

    def wait_for(self, condition: Callable[[], bool], timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if condition():
                return True
            time.sleep(0.2)
        return condition()


@pytest.fixture
def project(stack: Stack) -> Iterator[str]:
    """A project of its own on the suite's emulator, its topics deleted afterwards."""
    project_id = f"scrapejobs-redelivery-{uuid.uuid4().hex[:8]}"
    yield project_id
    remove_topology(project_id)


def _publish(project_id: str, items: list[str]) -> None:
    publisher = pubsub_v1.PublisherClient()
    topic = publisher.topic_path(project_id, in_lane(TOPOLOGY.task_topic, LANE))
    for future in [publisher.publish(topic, item.encode()) for item in items]:
        future.result(timeout=30)


def test_messages_pushed_while_the_endpoint_refuses_all_arrive(project: str) -> None:
    endpoint = Endpoint(free_port(), lambda data, delivery: (204, 0.0))
    ensure_topology(project, f"http://127.0.0.1:{endpoint.port}", TOPOLOGY)
    items = [f"m{n}" for n in range(50)]
    _publish(project, items)
    time.sleep(4)  # every push so far: connection refused
    endpoint.listen()
    try:
        arrived = endpoint.wait_for(
            lambda: all(endpoint.count(PUSH_PATH, item) for item in items), timeout_s=60
        )
        missing = [item for item in items if not endpoint.count(PUSH_PATH, item)]
        assert arrived, f"never delivered: {missing}"
    finally:
        endpoint.stop()


def test_a_late_acknowledgement_does_not_stop_the_next_messages_retries(project: str) -> None:
    """``late`` fails once, then its second push is answered 2xx just after its ack deadline;
    ``failing`` always fails afterwards: it is still delivered max_delivery_attempts times,
    then dead-lettered."""

    def answer(data: str, delivery: int) -> tuple[int, float]:
        if data == "late":
            late = TOPOLOGY.ack_deadline_s + 0.8 if delivery == 2 else 0.0
            return (500, 0.0) if delivery == 1 else (204, late)
        return 500, 0.0

    endpoint = Endpoint(free_port(), answer)
    endpoint.listen()
    try:
        ensure_topology(project, f"http://127.0.0.1:{endpoint.port}", TOPOLOGY)
        _publish(project, ["late"])
        assert endpoint.wait_for(lambda: endpoint.count(PUSH_PATH, "late") >= 2, timeout_s=30)
        time.sleep(TOPOLOGY.ack_deadline_s + 3)  # the late answer came and went
        _publish(project, ["failing"])
        dead_lettered = endpoint.wait_for(
            lambda: endpoint.count(DEAD_LETTER_PATH, "failing") >= 1, timeout_s=60
        )
        attempts = endpoint.count(PUSH_PATH, "failing")
        assert dead_lettered, f"'failing' was pushed {attempts} times, never dead-lettered"
        assert attempts == TOPOLOGY.max_delivery_attempts
    finally:
        endpoint.stop()
