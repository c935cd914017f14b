"""A local webhook receiver (loopback, its own thread) that verifies every delivery with the
standardwebhooks library, as a user's endpoint would."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


@dataclass(frozen=True)
class Received:
    path: str
    webhook_id: str
    payload: dict[str, Any] | None  # None: the signature did not verify
    answered: int


class WebhookReceiver:
    def __init__(self, secret: str) -> None:
        self.secret = secret
        self.received: list[Received] = []
        self.fail_first: dict[str, int] = {}  # path -> how many deliveries answer 500 first
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> WebhookReceiver:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def for_path(self, path: str) -> list[Received]:
        with self._lock:
            return [r for r in self.received if r.path == path]

    def take(self, path: str, body: bytes, headers: dict[str, str]) -> int:
        try:
            payload: dict[str, Any] | None = Webhook(self.secret).verify(body, headers)
        except WebhookVerificationError:
            payload = None
        with self._lock:
            failing = self.fail_first.get(path, 0)
            seen = sum(1 for r in self.received if r.path == path)
            status = 500 if payload is None or seen < failing else 204
            self.received.append(Received(path, headers.get("webhook-id", ""), payload, status))
        return status


def _handler(receiver: WebhookReceiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            headers = {name.lower(): value for name, value in self.headers.items()}
            status = receiver.take(self.path, body, headers)
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            return None

    return Handler
