"""A language-model server on loopback speaking both providers' HTTP protocols, scripted:
OpenAI's chat completions (``POST /v1/chat/completions``) and Vertex AI's ``generateContent``
(``POST /v1beta1/projects/P/locations/L/publishers/google/models/M:generateContent``).

Each request takes the next scripted step (the last repeats): a JSON answer text with its
usage, or an HTTP error with headers. Every request is recorded (path, headers, JSON body).
It listens on 127.0.0.1 only, and stops with the test."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Answer:
    text: str
    input_tokens: int = 11
    output_tokens: int = 7


@dataclass(frozen=True)
class Failure:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    message: str = "scripted failure"


Step = Answer | Failure


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class ModelServer:
    def __init__(self, *steps: Step, delay_s: float = 0.0) -> None:
        self.steps = list(steps) or [Answer("{}")]
        self.received: list[Received] = []
        self.delay_s = delay_s
        self.in_flight = 0
        self.most_in_flight = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> ModelServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    def next_step(self, request: Received) -> Step:
        with self._lock:
            self.received.append(request)
            return self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]


def _handler(server: ModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            headers = {k.lower(): v for k, v in self.headers.items()}
            step = server.next_step(Received(self.path, headers, body))
            with server._lock:
                server.in_flight += 1
                server.most_in_flight = max(server.most_in_flight, server.in_flight)
            try:
                if server.delay_s:
                    threading.Event().wait(server.delay_s)
                if isinstance(step, Failure):
                    self._send(step.status, _error(step, self.path), step.headers)
                elif self.path.endswith(":generateContent"):
                    self._send(200, _gemini(step, body))
                else:
                    self._send(200, _chat(step, body))
            finally:
                with server._lock:
                    server.in_flight -= 1

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            return None

    return Handler


def _chat(step: Answer, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_764_000_000,
        "model": body.get("model", "m"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": step.text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": step.input_tokens,
            "completion_tokens": step.output_tokens,
            "total_tokens": step.input_tokens + step.output_tokens,
        },
    }


def _gemini(step: Answer, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": step.text}]}, "finishReason": "STOP"}
        ],
        "usageMetadata": {
            "promptTokenCount": step.input_tokens,
            "candidatesTokenCount": step.output_tokens,
            "totalTokenCount": step.input_tokens + step.output_tokens,
        },
        "modelVersion": "gemini-test-001",
    }


def _error(step: Failure, path: str) -> dict[str, Any]:
    if path.endswith(":generateContent"):
        return {"error": {"code": step.status, "message": step.message, "status": "ERROR"}}
    return {"error": {"message": step.message, "type": "error", "code": str(step.status)}}
