"""Applies the push authentication policy to incoming requests (see ``push_auth``)."""

from __future__ import annotations

import logging

import anyio
from fastapi import HTTPException, Request

from scrapejobs_worker.delivery.push_auth import (
    KeySource,
    PushAuthError,
    PushAuthPolicy,
    verify_push_token,
)

log = logging.getLogger(__name__)


class PushGuard:
    """``policy`` None means authentication is off (local development, logged at startup)."""

    def __init__(self, policy: PushAuthPolicy | None, keys: KeySource | None) -> None:
        self._policy = policy
        self._keys = keys
        if policy is None:
            log.warning(
                "push authentication is disabled (SCRAPEJOBS_PUSH_AUTH=none): local dev only"
            )

    async def check(self, authorization: str | None) -> None:
        if self._policy is None:
            return
        try:
            # A JWKS refresh is a blocking fetch: keep it off the event loop.
            await anyio.to_thread.run_sync(
                verify_push_token, authorization, self._policy, self._keys
            )
        except PushAuthError as exc:
            log.warning("push rejected", extra={"reason": exc.reason})
            status = 401 if exc.reason in ("missing_token", "malformed_token") else 403
            raise HTTPException(status, f"push authentication failed: {exc.reason}") from None


async def require_push_identity(request: Request) -> None:
    """FastAPI dependency for the push endpoints."""
    guard: PushGuard = request.app.state.push_guard
    await guard.check(request.headers.get("authorization"))
