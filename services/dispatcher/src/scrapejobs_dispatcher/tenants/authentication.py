"""Who is calling, and what it may do: one policy per ``auth_mode``, applied to every /v1 and
/v2 route before the body is read (credentials_first.py), and a role check per route.

``api_key``: the key, as ``X-API-Key`` or ``Authorization: Bearer <key>`` (as Firecrawl's SDKs
send it), is a bootstrap digest of the settings (an administrator) or a key of the store
(keyring.py), which names its tenant and role. ``iam``: Cloud Run IAM validated a Google
identity token at the edge (the service has no public invoker), and the identity is only ever
taken from what was verified: behind Identity-Aware Proxy, IAP's signed assertion
(``X-Goog-IAP-JWT-Assertion``, verified here: iap_assertion.py); else the token Cloud Run
checked, ``X-Serverless-Authorization`` when it is sent (Cloud Run then checks it and passes
``Authorization`` through unchecked), else ``Authorization``. ``X-Goog-Authenticated-User-
Email`` is never read: anyone may write it. The identity (its ``email``) maps to a tenant and
role (``SCRAPEJOBS_IDENTITIES``). ``none``: local development, an administrator of the
default tenant.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
from collections.abc import Callable, Coroutine
from typing import Annotated, Any, Literal, Protocol

from fastapi import Depends, HTTPException, Request
from pydantic import BaseModel, TypeAdapter, ValidationError
from starlette.requests import HTTPConnection

from scrapejobs_dispatcher.tenants.api_keys import ApiKeyVerifier, parse_key_hashes
from scrapejobs_dispatcher.tenants.iap_assertion import (
    IAP_HEADER,
    BadAssertion,
    IapKeys,
    KeysUnavailable,
    fetch_keys,
    verified_email,
)
from scrapejobs_dispatcher.tenants.keyring import KeyLookupsBusy, Keyring
from scrapejobs_shared.domain.clock import utc_now
from scrapejobs_shared.domain.tenancy import DEFAULT_TENANT, Caller, Role, valid_tenant
from scrapejobs_shared.errors import NotAllowed

log = logging.getLogger(__name__)
API_KEY_HEADER = "x-api-key"
SERVERLESS_HEADER = "x-serverless-authorization"
CALLER_STATE = "caller"


class Refused(NotAllowed):
    """The caller may not call: 401 (no valid credentials) or 403 (its role may not)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.code = "unauthenticated" if status == 401 else "forbidden"
        self.reason = reason


class IdentityRole(BaseModel):
    tenant: str
    role: Role


_IDENTITIES = TypeAdapter(dict[str, IdentityRole])


def parse_identities(raw: str) -> dict[str, Caller]:
    """``SCRAPEJOBS_IDENTITIES`` as callers by lower-cased e-mail (ValueError when malformed)."""
    if not raw.strip():
        return {}
    try:
        parsed = _IDENTITIES.validate_json(raw)
    except ValidationError as exc:
        raise ValueError(f"SCRAPEJOBS_IDENTITIES is not a valid mapping: {exc}") from None
    for email, entry in parsed.items():
        if not valid_tenant(entry.tenant):
            raise ValueError(f"SCRAPEJOBS_IDENTITIES: {email!r} names an invalid tenant")
    return {email.lower(): Caller(e.tenant, e.role) for email, e in parsed.items()}


class AuthSettings(Protocol):
    """The settings authentication reads (``settings.py``'s ``DispatcherSettings``)."""

    auth_mode: Literal["iam", "api_key", "none"]
    iap_keys_url: str
    iap_audience: str
    api_key_hashes: str
    scheduler_key_hashes: str
    api_key_recheck_s: float
    identities: str
    iam_default_tenant: str
    iam_default_role: Role


class Authenticator:
    def __init__(self, settings: AuthSettings, iap_keys: IapKeys | None = None) -> None:
        """``iap_keys``: IAP's public keys (iam mode behind IAP; read over HTTPS without)."""
        self.mode = settings.auth_mode
        self._iap_keys = iap_keys or IapKeys(fetch_keys, settings.iap_keys_url)
        self._iap_audience = settings.iap_audience
        bootstrap = ApiKeyVerifier(parse_key_hashes(settings.api_key_hashes))
        schedulers = ApiKeyVerifier(parse_key_hashes(settings.scheduler_key_hashes))
        self.keyring = Keyring(bootstrap, utc_now, settings.api_key_recheck_s, schedulers)
        self._identities = parse_identities(settings.identities)
        self._iam_default = Caller(settings.iam_default_tenant, settings.iam_default_role)
        if self.mode == "none":
            log.warning("authentication is disabled (SCRAPEJOBS_AUTH_MODE=none): local dev only")

    async def identify(self, request: HTTPConnection) -> Caller:
        """The caller, from its headers alone; ``Refused`` (401) without valid credentials."""
        if self.mode == "none":
            return Caller(DEFAULT_TENANT, Role.ADMIN)
        if self.mode == "api_key":
            try:
                known = await self.keyring.known(api_key_of(request) or None)
            except KeyLookupsBusy as exc:
                raise Refused(503, str(exc)) from None
            if known is None:
                raise Refused(
                    401, "a valid API key is required (X-API-Key, or Authorization: Bearer)"
                )
            return known.caller
        assertion = request.headers.get(IAP_HEADER)
        if assertion:  # IAP signed the person in, and says so in a signed assertion
            try:
                email = await verified_email(assertion, self._iap_keys, self._iap_audience)
            except BadAssertion as exc:
                raise Refused(401, f"IAP's assertion is not valid: {exc}") from None
            except KeysUnavailable as exc:
                raise Refused(503, str(exc)) from None
            return self._of_identity(email)
        # the token Cloud Run checked at the edge: X-Serverless-Authorization when sent (then
        # Authorization reaches us as the caller wrote it), else Authorization
        checked = request.headers.get(SERVERLESS_HEADER) or request.headers.get("authorization")
        scheme, _, token = (checked or "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            raise Refused(401, "a Google identity token is required (Authorization: Bearer)")
        return self._of_identity(_token_email(token.strip()))

    def _of_identity(self, email: str) -> Caller:
        """The caller ``email`` is (an identity not listed: the default tenant's role); an
        identity without one is refused, never taken for the default (a token minted for an
        audience without the ``email`` scope says nothing of who sent it)."""
        if not email:
            raise Refused(
                401,
                "the identity token carries no email claim (mint it with the email scope, "
                "e.g. gcloud auth print-identity-token --include-email)",
            )
        return self._identities.get(email.lower(), self._iam_default)


def _token_email(token: str) -> str:
    """The ``email`` claim of a Google identity token Cloud Run has already verified ("" when
    the token carries none or is not a JWT)."""
    parts = token.split(".")
    if len(parts) != 3 or len(parts[1]) > 8192:
        return ""
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return ""
    email = claims.get("email") if isinstance(claims, dict) else None
    return email if isinstance(email, str) else ""


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


async def identified(request: HTTPConnection) -> Caller:
    """The caller of ``request`` (identified once, by the middleware or here)."""
    caller = request.scope.setdefault("state", {}).get(CALLER_STATE)
    if isinstance(caller, Caller):
        return caller
    authenticator: Authenticator = request.app.state.authenticator
    try:
        caller = await authenticator.identify(request)
    except Refused as exc:
        raise HTTPException(exc.status, exc.reason) from None
    request.scope["state"][CALLER_STATE] = caller
    return caller


def allowing(*roles: Role) -> Callable[[Request], Coroutine[Any, Any, Caller]]:
    """A dependency: the caller, when its role is one of ``roles``; else a 403."""

    async def caller_in_role(request: Request) -> Caller:
        caller = await identified(request)
        if caller.role not in roles:
            allowed = " or ".join(role.value for role in roles)
            raise HTTPException(
                403, f"this call needs the {allowed} role (the key is {caller.role.value})"
            )
        return caller

    caller_in_role.__name__ = "caller_" + "_or_".join(role.value for role in roles)
    return caller_in_role


require_caller = allowing(Role.MEMBER, Role.ADMIN)  # the tenant's own work, or everything
require_admin = allowing(Role.ADMIN)
require_operator = allowing(Role.ADMIN, Role.SCHEDULER)  # maintenance
CallerDep = Annotated[Caller, Depends(require_caller)]
AdminDep = Annotated[Caller, Depends(require_admin)]
