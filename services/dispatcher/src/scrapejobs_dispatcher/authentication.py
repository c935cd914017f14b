"""Who may call the API: one policy per ``auth_mode``, applied to every /v1 route."""

from __future__ import annotations

import hashlib
import logging

from fastapi import HTTPException, Request
from starlette.requests import HTTPConnection

from scrapejobs_dispatcher.api_keys import ApiKeyVerifier, parse_key_hashes
from scrapejobs_dispatcher.settings import DispatcherSettings

log = logging.getLogger(__name__)
API_KEY_HEADER = "x-api-key"


class Authenticator:
    """``iam``: Cloud Run IAM validated a Google identity token at the edge (the service has no
    public invoker); the app insists the token was presented, as ``Authorization`` or, behind
    Identity-Aware Proxy, as IAP's ``X-Serverless-Authorization``. ``api_key``: the key, as
    ``X-API-Key`` or ``Authorization: Bearer <key>`` (as Firecrawl's SDKs send it), is checked in
    constant time against stored SHA-256 digests. ``none``: local development."""

    def __init__(self, settings: DispatcherSettings) -> None:
        self.mode = settings.auth_mode
        self.keys = ApiKeyVerifier(parse_key_hashes(settings.api_key_hashes))
        if self.mode == "none":
            log.warning("authentication is disabled (SCRAPEJOBS_AUTH_MODE=none): local dev only")
        elif self.mode == "api_key" and not settings.api_key_hashes.strip():
            log.error("auth_mode=api_key but no SCRAPEJOBS_API_KEY_HASHES: every call is refused")

    def check(self, request: HTTPConnection) -> None:
        """Raise a 401 ``HTTPException`` when the caller's credentials are not valid."""
        refusal = self.refusal(request)
        if refusal is not None:
            raise HTTPException(401, refusal)

    def refusal(self, request: HTTPConnection) -> str | None:
        """Why the caller is refused (from its headers alone), or None when it may call."""
        if self.mode == "none":
            return None
        if self.mode == "api_key":
            if not self.keys.verify(api_key_of(request) or None):
                return "a valid API key is required (X-API-Key, or Authorization: Bearer)"
            return None
        if request.headers.get("x-serverless-authorization"):
            return None  # IAP signed the person in; Cloud Run checked IAP's token at the edge
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            return "a Google identity token is required (Authorization: Bearer)"
        return None


def api_key_of(request: HTTPConnection) -> str:
    """The API key the request carries: ``X-API-Key``, else a bearer token ("" without)."""
    key = request.headers.get(API_KEY_HEADER)
    if key:
        return key
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def caller_of(request: HTTPConnection) -> str:
    """Who the caller is, for keys that are per caller (a digest of its API key; "" without)."""
    key = api_key_of(request)
    return hashlib.sha256(key.encode()).hexdigest() if key else ""


async def require_caller(request: Request) -> None:
    """FastAPI dependency: the app's Authenticator decides."""
    authenticator: Authenticator = request.app.state.authenticator
    authenticator.check(request)
