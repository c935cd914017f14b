"""A local webhook receiver (loopback, its own thread) that verifies every delivery as a
user's endpoint would: with the standardwebhooks library, or (``firecrawl=True``) as Firecrawl's
documentation shows (the HMAC-SHA256 of the raw body against ``X-Firecrawl-Signature``)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import threading
import time
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
    def __init__(self, secret: str, firecrawl: bool = False) -> None:
        self.secret = secret
        self.firecrawl = firecrawl
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

    async def once_received(self, path: str, n: int, timeout_s: float = 60) -> list[Received]:
        """The deliveries to ``path`` once ``n`` came (and nothing more for two seconds)."""
        deadline = time.monotonic() + timeout_s
        while len(self.for_path(path)) < n:
            assert time.monotonic() < deadline, f"{path}: {self.for_path(path)}"
            await asyncio.sleep(0.2)
        await asyncio.sleep(2)  # nothing more may come
        return self.for_path(path)

    def for_path(self, path: str) -> list[Received]:
        with self._lock:
            return [r for r in self.received if r.path == path]

    def take(self, path: str, body: bytes, headers: dict[str, str]) -> int:
        payload = self._verified(body, headers)
        webhook_id = headers.get("webhook-id", "")
        if self.firecrawl and payload is not None:
            webhook_id = str(payload.get("webhookId", ""))
        with self._lock:
            failing = self.fail_first.get(path, 0)
            seen = sum(1 for r in self.received if r.path == path)
            status = 500 if payload is None or seen < failing else 204
            self.received.append(Received(path, webhook_id, payload, status))
        return status

    def _verified(self, body: bytes, headers: dict[str, str]) -> dict[str, Any] | None:
        if self.firecrawl:
            digest = hmac.new(self.secret.encode(), body, hashlib.sha256).hexdigest()
            signed = headers.get("x-firecrawl-signature", "")
            return json.loads(body) if hmac.compare_digest(signed, f"sha256={digest}") else None
        try:
            payload: dict[str, Any] = Webhook(self.secret).verify(body, headers)
        except WebhookVerificationError:
            return None
        return payload


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
