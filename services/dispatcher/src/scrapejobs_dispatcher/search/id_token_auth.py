"""``Authorization: Bearer <Google ID token>`` on each search (SearXNG on Cloud Run behind IAM,
terraform/search.tf: the service's URL is the token's audience). The token comes from the
metadata server through google-auth (``fetch_id_token``), fetched off the event loop, kept
until five minutes before its ``exp``, and fetched again once when the service answers 401."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Callable

import httpx

REFRESH_MARGIN_S = 300.0
DEFAULT_LIFETIME_S = 3600.0

TokenFetcher = Callable[[str], str]  # an audience -> a Google-signed ID token for it


def fetch_google_id_token(audience: str) -> str:
    from google.auth.transport.requests import Request
    from google.oauth2 import id_token

    token: str = id_token.fetch_id_token(Request(), audience)  # type: ignore[no-untyped-call]
    return token


def token_expiry(token: str) -> float | None:
    """The token's ``exp`` (unverified: only to know when to fetch another)."""
    from google.auth import jwt

    try:
        claims = jwt.decode(token, verify=False)  # type: ignore[no-untyped-call]
    except ValueError:
        return None
    exp = claims.get("exp") if isinstance(claims, dict) else None
    return float(exp) if isinstance(exp, int | float) else None


class GoogleIdTokenAuth(httpx.Auth):
    def __init__(
        self,
        audience: str,
        fetch: TokenFetcher = fetch_google_id_token,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.audience = audience
        self._fetch = fetch
        self._clock = clock
        self._lock = asyncio.Lock()
        self._token: str | None = None
        self._expires_at = 0.0

    def __repr__(self) -> str:
        return f"GoogleIdTokenAuth(audience={self.audience!r})"

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        request.headers["Authorization"] = f"Bearer {await self._current(force=False)}"
        response = yield request
        if response.status_code == 401:
            request.headers["Authorization"] = f"Bearer {await self._current(force=True)}"
            yield request

    async def _current(self, *, force: bool) -> str:
        async with self._lock:
            now = self._clock()
            if force or self._token is None or now >= self._expires_at - REFRESH_MARGIN_S:
                self._token = await asyncio.to_thread(self._fetch, self.audience)
                self._expires_at = token_expiry(self._token) or now + DEFAULT_LIFETIME_S
            return self._token
