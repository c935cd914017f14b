"""How the client proves who it is: an API key (``X-API-Key``, the dispatcher's ``api_key``
mode) or a Google ID token (``Authorization: Bearer``, its ``iam`` mode behind Cloud Run IAM).

Both are ``httpx.Auth`` flows. The ID token is fetched with google-auth's
``fetch_id_token`` (a service account's metadata server, ``GOOGLE_APPLICATION_CREDENTIALS``
pointing at a service-account key, or gcloud's user credentials where they can mint ID
tokens), kept until shortly before it expires, and fetched again once when the API answers 401.
"""

from __future__ import annotations

import base64
import binascii
import json
import threading
import time
from collections.abc import Callable, Generator

import httpx

API_KEY_HEADER = "X-API-Key"
TOKEN_REFRESH_MARGIN_S = 300.0
DEFAULT_TOKEN_LIFETIME_S = 3600.0

TokenFetcher = Callable[[str], str]
"""Given an audience, return a Google-signed ID token for it."""


class ApiKeyAuth(httpx.Auth):
    def __init__(self, api_key: str) -> None:
        if not api_key:
            raise ValueError("api_key is empty")
        self._api_key = api_key

    def __repr__(self) -> str:
        return "ApiKeyAuth(<key>)"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers[API_KEY_HEADER] = self._api_key
        yield request


def fetch_google_id_token(audience: str) -> str:
    """google-auth's ``fetch_id_token`` with its requests transport."""
    from google.auth.transport.requests import Request
    from google.oauth2 import id_token

    token: str = id_token.fetch_id_token(Request(), audience)  # type: ignore[no-untyped-call]
    return token


class GoogleIdTokenAuth(httpx.Auth):
    """``Authorization: Bearer <ID token for audience>``; the audience of a Cloud Run service
    is its URL."""

    def __init__(
        self,
        audience: str,
        fetch: TokenFetcher = fetch_google_id_token,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.audience = audience
        self._fetch = fetch
        self._clock = clock
        self._lock = threading.Lock()
        self._token: str | None = None
        self._expires_at = 0.0

    def __repr__(self) -> str:
        return f"GoogleIdTokenAuth(audience={self.audience!r})"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self._current(force=False)}"
        response = yield request
        if response.status_code == 401:
            request.headers["Authorization"] = f"Bearer {self._current(force=True)}"
            yield request

    def _current(self, *, force: bool) -> str:
        with self._lock:
            now = self._clock()
            if force or self._token is None or now >= self._expires_at - TOKEN_REFRESH_MARGIN_S:
                self._token = self._fetch(self.audience)
                self._expires_at = token_expiry(self._token) or now + DEFAULT_TOKEN_LIFETIME_S
            return self._token


def token_expiry(token: str) -> float | None:
    """The ``exp`` claim of a JWT (not verified: only to know when to fetch a new one)."""
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError, binascii.Error):
        return None
    exp = claims.get("exp") if isinstance(claims, dict) else None
    return float(exp) if isinstance(exp, int | float) else None


def choose_auth(
    api_url: str,
    api_key: str | None,
    iam: bool,
    audience: str | None,
    fetcher: TokenFetcher,
) -> httpx.Auth | None:
    """The auth of a client: an API key, or a Google ID token for ``audience`` (the API's
    URL by default), or none; never both."""
    if api_key and (iam or audience):
        raise ValueError("choose one of api_key and iam (a Google ID token), not both")
    if api_key:
        return ApiKeyAuth(api_key)
    if iam or audience:
        return GoogleIdTokenAuth(audience or api_url, fetcher)
    return None
