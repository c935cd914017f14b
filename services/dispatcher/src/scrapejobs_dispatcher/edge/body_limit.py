"""Refuse request bodies over a size limit before they are buffered (413, JSON error)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

DEFAULT_MAX_BODY_BYTES = 25 * 1024 * 1024  # 10,000 URLs of 2 KB fit; Cloud Run caps at 32 MiB


class BodyLimitMiddleware:
    """Counts bytes as they arrive (also for chunked uploads without Content-Length)."""

    def __init__(self, app: ASGIApp, max_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(send)
            return
        request = _CountedRequest(receive, send, self.max_bytes, self._refuse)
        try:
            await self.app(scope, request.receive, request.send)
        except Exception:
            if not request.refused:
                raise

    async def _refuse(self, send: Send) -> None:
        message = f"request body larger than {self.max_bytes} bytes"
        body = json.dumps({"error": {"code": "payload_too_large", "message": message}}).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


class _CountedRequest:
    """One request's body, counted as the application reads it: past the limit the client is
    answered 413 (unless a response has started) and the application sees it go away."""

    def __init__(
        self,
        receive: Receive,
        send: Send,
        max_bytes: int,
        refuse: Callable[[Send], Awaitable[None]],
    ) -> None:
        self._receive = receive
        self._send = send
        self._max_bytes = max_bytes
        self._refuse = refuse
        self._seen = 0
        self._started = False
        self.refused = False

    async def receive(self) -> Message:
        message = await self._receive()
        if message["type"] != "http.request":
            return message
        self._seen += len(message.get("body", b""))
        if self._seen <= self._max_bytes or self.refused:
            return message
        self.refused = True
        if not self._started:
            await self._refuse(self._send)
        # The application sees a client that went away; nothing more is read.
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        if self.refused:
            return  # our 413 was the answer
        self._started = self._started or message["type"] == "http.response.start"
        await self._send(message)
