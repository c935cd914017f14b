"""The least a worker could do per push: the endpoint of the floor runs (bench/floors.py).

A raw ASGI app (no framework), served by uvicorn in its own process. ``FLOOR_MODE`` picks what it
does with each push before it answers 204:

* ``noop``: decodes the push envelope (to know which message it got), nothing else;
* ``commit``: ONE Firestore batch commit: a ~500-byte result document + ``Increment(1)`` on one
  of 16 counter documents, the least a worker must durably write before it acks;
* ``read_2commits``: one batched read of 2 documents (the task and its job), then two commits:
  the task document (claim), then the ``commit`` batch (finish).

Firestore is the emulator at ``FIRESTORE_EMULATOR_HOST`` (project ``FLOOR_PROJECT``), reached
with ``google.cloud.firestore.AsyncClient``. ``GET /stats`` answers the receipts counted so far
(``first``/``last``: wall-clock time of the first and last acked push); ``POST /reset`` zeroes
them (after a warm-up). A push whose Firestore work fails is answered 500 (Pub/Sub redelivers it)
and counted in ``errors``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import asdict, dataclass
from typing import Any

from google.cloud import firestore

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

MODES = ("noop", "commit", "read_2commits")
COUNTER_SHARDS = 16
JOB_ID = "floor-job"
RESULT_DATA = {  # ~500 bytes once stored, like a result of the catalog extraction
    "status": "succeeded",
    "http_status": 200,
    "url": "http://127.0.0.1:8000/product/000123",
    "data": {
        "title": "Product 000123 " + "t" * 60,
        "price": 12.5,
        "sku": "SK-00-000123",
        "tags": ["tag-a", "tag-b", "tag-c"],
    },
    "notes": "n" * 250,
    "elapsed_ms": 4.2,
}


@dataclass
class Stats:
    count: int = 0  # distinct messages acked
    deliveries: int = 0  # pushes received, redeliveries included
    errors: int = 0
    first: float | None = None
    last: float | None = None


class FloorApp:
    def __init__(self, mode: str, project: str) -> None:
        if mode not in MODES:
            raise ValueError(f"FLOOR_MODE must be one of {', '.join(MODES)}, not {mode!r}")
        self.mode = mode
        self.project = project
        self.stats = Stats()
        self._seen: set[str] = set()
        self._db: Any = None  # google.cloud.firestore.AsyncClient, made in the server's loop

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await self._start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self._db is not None:
                    self._db.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _start(self) -> None:
        if self.mode == "noop":
            return
        self._db = firestore.AsyncClient(project=self.project)
        await self._db.document(f"floor-jobs/{JOB_ID}").set({"status": "running", "total": 0})

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        path, method = scope["path"], scope["method"]
        if path == "/stats" and method == "GET":
            await respond(send, 200, json.dumps(asdict(self.stats)).encode())
        elif path == "/reset" and method == "POST":
            self.stats = Stats()
            self._seen.clear()
            await respond(send, 204)
        elif path == "/push" and method == "POST":
            await respond(send, await self._push(body))
        else:
            await respond(send, 404)

    async def _push(self, body: bytes) -> int:
        message_id: str = json.loads(body)["message"]["messageId"]
        self.stats.deliveries += 1
        try:
            await self._durable_work(message_id, self.stats.deliveries % COUNTER_SHARDS)
        except Exception:
            self.stats.errors += 1
            return 500
        self._count(message_id)
        return 204

    async def _durable_work(self, message_id: str, shard: int) -> None:
        if self.mode == "read_2commits":
            await self._read_task_and_job(message_id)
            await self._claim(message_id)
        if self.mode != "noop":
            await self._finish(message_id, shard)

    async def _read_task_and_job(self, message_id: str) -> None:
        refs = [
            self._db.document(f"floor-tasks/{message_id}"),
            self._db.document(f"floor-jobs/{JOB_ID}"),
        ]
        async for _snapshot in self._db.get_all(refs):
            pass

    async def _claim(self, message_id: str) -> None:
        batch = self._db.batch()
        batch.set(self._db.document(f"floor-tasks/{message_id}"), {"status": "running"})
        await batch.commit()

    async def _finish(self, message_id: str, shard: int) -> None:
        batch = self._db.batch()
        batch.set(self._db.document(f"floor-results/{message_id}"), RESULT_DATA)
        batch.set(
            self._db.document(f"floor-counters/{shard}"),
            {"done": firestore.Increment(1)},
            merge=True,
        )
        await batch.commit()

    def _count(self, message_id: str) -> None:
        if message_id in self._seen:
            return
        self._seen.add(message_id)
        now = time.time()
        if self.stats.first is None:
            self.stats.first = now
        self.stats.last = now
        self.stats.count += 1


async def read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    more = True
    while more:
        message = await receive()
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    return b"".join(chunks)


async def respond(send: Send, status: int, body: bytes = b"") -> None:
    headers = [(b"content-type", b"application/json")] if body else []
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


app = FloorApp(os.environ.get("FLOOR_MODE", "noop"), os.environ.get("FLOOR_PROJECT", "floors"))
