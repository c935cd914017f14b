"""A Cloud Run service of simulated instances: each one the service's own ASGI app (its
composition root, its lifespan), serving at most ``concurrency`` requests at once; a request
goes to the least busy instance with a free place, or waits for one; a request past the
request timeout is answered 504 while its work runs on, as Cloud Run cuts the response, not
the instance's work."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

import httpx
from fastapi import FastAPI

from scrapejobs_scale.limits import CloudRunLimits


@dataclass
class Instance:
    app: FastAPI
    client: httpx.AsyncClient
    active: int = 0
    served: int = 0


class CloudRunService:
    def __init__(self, name: str, limits: CloudRunLimits) -> None:
        self.name = name
        self.limits = limits
        self.instances: list[Instance] = []
        self._waiting: deque[asyncio.Future[None]] = deque()
        self.timed_out = 0
        self.waited = 0

    async def start(self, apps: Sequence[FastAPI], stack: AsyncExitStack) -> None:
        for app in apps[: self.limits.max_instances]:
            await stack.enter_async_context(app.router.lifespan_context(app))
            transport = httpx.ASGITransport(app=app)
            client = httpx.AsyncClient(transport=transport, base_url=f"http://{self.name}")
            await stack.enter_async_context(client)
            self.instances.append(Instance(app, client))

    async def post(self, path: str, body: dict[str, Any]) -> int:
        """A push: its status (504 when the request outlived its timeout)."""
        answer = await self.request(path, body)
        return 504 if answer is None else answer.status_code

    async def request(
        self, path: str, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> httpx.Response | None:
        """A request to the least busy instance with a free place; None past its timeout."""
        instance = await self._place()
        instance.active += 1
        work = asyncio.ensure_future(instance.client.post(path, json=body, headers=headers))
        try:
            done, _ = await asyncio.wait({work}, timeout=self.limits.request_timeout_s)
            if not done:
                self.timed_out += 1
                work.add_done_callback(lambda _: self._leave(instance))
                return None
            return work.result()
        finally:
            if work.done():
                self._leave(instance)

    def _leave(self, instance: Instance) -> None:
        instance.active -= 1
        instance.served += 1
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    async def _place(self) -> Instance:
        while True:
            free = min(self.instances, key=lambda i: i.active)
            if free.active < self.limits.concurrency:
                return free
            self.waited += 1
            waiter = asyncio.get_running_loop().create_future()
            self._waiting.append(waiter)
            await waiter
