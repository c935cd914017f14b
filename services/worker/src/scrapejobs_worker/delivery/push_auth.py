"""Authentication of Pub/Sub push requests (OIDC ID tokens).

Security model
--------------
1. **Cloud Run IAM at the edge.** The worker service has no public invoker: only the
   push subscription's service account holds ``roles/run.invoker``. Cloud Run checks
   the OIDC token Pub/Sub attaches to every push before the request reaches the
   container, and then replaces the token's signature (it forwards
   ``header.payload.SIGNATURE_REMOVED_BY_GOOGLE``), so the container cannot verify it.
2. **In-app claim checks as defence in depth.** Every push is still decoded here and
   its claims checked: ``aud`` equals the configured audience, ``iss`` is Google,
   the token is within its validity window, and ``email`` is the push service
   account with ``email_verified`` true. This stops, for example, a different
   service account that was mistakenly granted ``run.invoker`` from driving tasks.

Signature verification is configurable through :attr:`PushAuthPolicy.verify_signature`:

* ``True`` — RS256 signatures are verified against Google's JWKS
  (:data:`GOOGLE_JWKS_URL`). Use it when the app is reached without Cloud Run IAM
  (e.g. behind a load balancer, or off Cloud Run) and in tests.
* ``False`` — behind Cloud Run IAM: the token is decoded *without* verifying its
  signature (the edge already did), but every claim check above still applies.

Local development (``push_auth=none``) skips this module entirely; the caller decides.

This module is pure logic: it does no I/O itself. :class:`CachedJwks` gets the JWKS
document through an injected callable, which the composition root implements (e.g.
with httpx). That callable is synchronous, so call :func:`verify_push_token` from a
sync FastAPI dependency (run in the threadpool) or through ``anyio.to_thread``.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal, Protocol

import jwt

from scrapejobs_shared.errors import NotAllowed

log = logging.getLogger(__name__)

GOOGLE_JWKS_URL = "https://www.googleapis.com/oauth2/v3/certs"
GOOGLE_ISSUERS = ("https://accounts.google.com", "accounts.google.com")
SIGNING_ALGORITHM = "RS256"

PushAuthReason = Literal[
    "missing_token",
    "malformed_token",
    "bad_signature",
    "wrong_audience",
    "wrong_issuer",
    "expired",
    "foreign_email",
    "unverified_email",
]


class PushAuthError(NotAllowed):
    """A push request failed authentication.

    ``reason`` is a short, stable code suitable for logs and metrics:

    * ``missing_token`` — no (or an empty) ``Authorization`` header.
    * ``malformed_token`` — not ``Bearer <jwt>``, undecodable, or a required claim
      (``exp``, ``iat``) missing or mistyped.
    * ``bad_signature`` — wrong algorithm, unknown key id, or invalid signature.
    * ``wrong_audience`` / ``wrong_issuer`` — ``aud`` / ``iss`` mismatch.
    * ``expired`` — outside the validity window (``exp`` passed, or ``iat``/``nbf``
      in the future), clock leeway included.
    * ``foreign_email`` — ``email`` is not the push service account.
    * ``unverified_email`` — ``email_verified`` is not true.

    Messages never contain the token or its claims' values.
    """

    def __init__(self, reason: PushAuthReason, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason: PushAuthReason = reason
        self.detail = detail


@dataclass(frozen=True)
class PushAuthPolicy:
    """What a valid push token must look like."""

    audience: str
    service_account_email: str
    verify_signature: bool = True
    issuers: tuple[str, ...] = GOOGLE_ISSUERS
    leeway_s: int = 30

    def __post_init__(self) -> None:
        if not self.audience:
            raise ValueError("push auth audience must not be empty")
        if not self.service_account_email:
            raise ValueError("push auth service account email must not be empty")
        if not self.issuers:
            raise ValueError("push auth needs at least one accepted issuer")
        if self.leeway_s < 0:
            raise ValueError("push auth leeway must not be negative")


class KeySource(Protocol):
    """Resolves a JWT ``kid`` to a public key usable by PyJWT."""

    def key_for(self, kid: str) -> Any:
        """Return the key for ``kid``; raise ``PushAuthError("bad_signature")`` if unknown."""
        ...


class StaticJwks:
    """A :class:`KeySource` over a fixed JWKS document (``{"keys": [...]}``).

    Only RSA signing keys usable with RS256 are kept; other entries (encryption keys,
    other key types, entries carrying private material) are ignored.
    """

    def __init__(self, jwks: Mapping[str, Any]) -> None:
        entries = jwks.get("keys") if isinstance(jwks, Mapping) else None
        if not isinstance(entries, list):
            raise ValueError("JWKS document must be an object with a 'keys' list")
        self._keys: dict[str, Any] = {}
        for entry in entries:
            usable = _rsa_signing_key(entry)
            if usable is not None:
                self._keys[usable[0]] = usable[1]

    @property
    def kids(self) -> frozenset[str]:
        return frozenset(self._keys)

    def lookup(self, kid: str) -> Any | None:
        return self._keys.get(kid)

    def key_for(self, kid: str) -> Any:
        key = self.lookup(kid)
        if key is None:
            raise PushAuthError("bad_signature", "unknown signing key id")
        return key


def _rsa_signing_key(entry: object) -> tuple[str, Any] | None:
    if not isinstance(entry, dict):
        return None
    kid = entry.get("kid")
    usable = (
        entry.get("kty") == "RSA"
        and entry.get("use", "sig") == "sig"
        and entry.get("alg", SIGNING_ALGORITHM) == SIGNING_ALGORITHM
        and "d" not in entry
    )
    if not isinstance(kid, str) or not kid or not usable:
        return None
    try:
        return kid, jwt.PyJWK(entry, algorithm=SIGNING_ALGORITHM).key
    except (jwt.PyJWTError, ValueError, TypeError):
        log.warning("ignoring an unusable JWKS entry", extra={"kid": kid})
        return None


@dataclass(eq=False)
class CachedJwks:
    """A :class:`KeySource` that fetches a JWKS document and caches it.

    * The document is fetched on first use and again once ``ttl_s`` has passed.
    * An unknown ``kid`` triggers one immediate refetch (Google rotates its keys),
      at most once per ``min_refetch_interval_s`` so that tokens with made-up key
      ids cannot make us hammer the JWKS endpoint.
    * If a refresh fails while keys are cached, the cached keys keep being used and
      the refresh is retried after ``retry_after_s``. If there is nothing cached,
      the fetch error propagates (an infrastructure failure, not an auth failure).

    A lock serialises fetches, so concurrent callers (threadpool workers) share one
    fetch. ``fetch_jwks`` must return the parsed JWKS document.
    """

    fetch_jwks: Callable[[], Mapping[str, Any]]
    ttl_s: float = 3600
    _: KW_ONLY
    min_refetch_interval_s: float = 30
    retry_after_s: float = 60
    clock: Callable[[], float] = time.monotonic
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)
    _jwks: StaticJwks | None = field(init=False, default=None)
    _expires_at: float = field(init=False, default=0.0)
    _last_forced_at: float | None = field(init=False, default=None)

    def key_for(self, kid: str) -> Any:
        with self._lock:
            key = self._lookup(kid, self.clock())
        if key is None:
            raise PushAuthError("bad_signature", "unknown signing key id")
        return key

    def _lookup(self, kid: str, now: float) -> Any | None:
        jwks, fetched_now = self._jwks, False
        if jwks is None or now >= self._expires_at:
            jwks, fetched_now = self._refresh(now), True
        key = jwks.lookup(kid)
        if key is None and not fetched_now and self._may_force_refetch(now):
            self._last_forced_at = now
            key = self._refresh(now).lookup(kid)
        return key

    def _may_force_refetch(self, now: float) -> bool:
        last = self._last_forced_at
        return last is None or now - last >= self.min_refetch_interval_s

    def _refresh(self, now: float) -> StaticJwks:
        """Fetch the document; return the keys to use (the cached ones if that fails)."""
        try:
            jwks = StaticJwks(self.fetch_jwks())
        except Exception:
            if self._jwks is None:
                raise
            log.warning("JWKS refresh failed; keeping the cached keys", exc_info=True)
            self._expires_at = now + self.retry_after_s
            return self._jwks
        self._jwks = jwks
        self._expires_at = now + self.ttl_s
        return jwks


def verify_push_token(
    authorization_header: str | None,
    policy: PushAuthPolicy,
    keys: KeySource | None,
    now: float | None = None,
) -> dict[str, Any]:
    """Authenticate a push request; return the token's claims or raise PushAuthError.

    ``keys`` is required when ``policy.verify_signature`` is true (a missing key
    source is a configuration error: ``ValueError``). ``now`` is Unix time in
    seconds (defaults to the current time).
    """
    token = _bearer_token(authorization_header)
    if policy.verify_signature:
        if keys is None:
            raise ValueError("signature verification needs a key source")
        claims = _verified_claims(token, keys)
    else:
        claims = _unverified_claims(token)
    _check_claims(claims, policy, time.time() if now is None else now)
    return claims


def _bearer_token(authorization_header: str | None) -> str:
    if authorization_header is None or not authorization_header.strip():
        raise PushAuthError("missing_token")
    scheme, _, token = authorization_header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer":
        raise PushAuthError("malformed_token", "authorization scheme is not Bearer")
    if not token or any(char.isspace() for char in token):
        raise PushAuthError("malformed_token", "bearer token is empty or contains spaces")
    if token.count(".") != 2:
        raise PushAuthError("malformed_token", "token is not header.payload.signature")
    return token


def _verified_claims(token: str, keys: KeySource) -> dict[str, Any]:
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError as exc:
        raise PushAuthError("malformed_token", "undecodable token header") from exc
    if header.get("alg") != SIGNING_ALGORITHM:
        raise PushAuthError("bad_signature", f"algorithm must be {SIGNING_ALGORITHM}")
    kid = header.get("kid")
    if not isinstance(kid, str) or not kid:
        raise PushAuthError("bad_signature", "token has no key id")
    return _decode_verified(token, keys.key_for(kid))


def _decode_verified(token: str, key: Any) -> dict[str, Any]:
    # Only the signature is checked here; claims are checked by _check_claims, which
    # (unlike PyJWT) takes an explicit clock and reports precise reasons.
    options: Any = {
        "verify_signature": True,
        "verify_exp": False,
        "verify_nbf": False,
        "verify_iat": False,
        "verify_aud": False,
        "verify_iss": False,
        "verify_sub": False,
        "verify_jti": False,
    }
    try:
        return jwt.decode(token, key, algorithms=[SIGNING_ALGORITHM], options=options)
    except jwt.InvalidSignatureError as exc:
        raise PushAuthError("bad_signature", "signature does not verify") from exc
    except jwt.DecodeError as exc:
        raise PushAuthError("malformed_token", "undecodable token") from exc
    except jwt.PyJWTError as exc:
        raise PushAuthError("bad_signature", "token rejected by the verifier") from exc


def _unverified_claims(token: str) -> dict[str, Any]:
    """Decode ``header.payload.signature`` without checking the signature.

    The signature segment is ignored: behind Cloud Run IAM it is empty or
    ``SIGNATURE_REMOVED_BY_GOOGLE``.
    """
    header_segment, payload_segment, _signature = token.split(".")
    header = _json_segment(header_segment)
    claims = _json_segment(payload_segment)
    if header is None or claims is None:
        raise PushAuthError("malformed_token", "undecodable token")
    return claims


def _json_segment(segment: str) -> dict[str, Any] | None:
    try:
        raw = base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
        value = json.loads(raw)
    except (ValueError, binascii.Error):
        return None
    return value if isinstance(value, dict) else None


def _check_claims(claims: Mapping[str, Any], policy: PushAuthPolicy, now: float) -> None:
    if claims.get("aud") != policy.audience:
        raise PushAuthError("wrong_audience")
    if claims.get("iss") not in policy.issuers:
        raise PushAuthError("wrong_issuer")
    _check_validity_window(claims, now, policy.leeway_s)
    _check_email(claims, policy.service_account_email)


def _check_validity_window(claims: Mapping[str, Any], now: float, leeway_s: int) -> None:
    exp = _numeric_claim(claims, "exp", required=True)
    iat = _numeric_claim(claims, "iat", required=True)
    nbf = _numeric_claim(claims, "nbf", required=False)
    if exp is not None and exp <= now - leeway_s:
        raise PushAuthError("expired", "token has expired")
    if iat is not None and iat > now + leeway_s:
        raise PushAuthError("expired", "token was issued in the future")
    if nbf is not None and nbf > now + leeway_s:
        raise PushAuthError("expired", "token is not valid yet")


def _numeric_claim(claims: Mapping[str, Any], name: str, *, required: bool) -> float | None:
    value = claims.get(name)
    if value is None and not required:
        return None
    number = _finite_number(value)
    if number is None:
        raise PushAuthError("malformed_token", f"'{name}' claim is missing or not a number")
    return number


def _finite_number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _check_email(claims: Mapping[str, Any], expected: str) -> None:
    email = claims.get("email")
    if not isinstance(email, str) or email.casefold() != expected.casefold():
        raise PushAuthError("foreign_email")
    verified = claims.get("email_verified")
    if verified is not True and verified != "true":
        raise PushAuthError("unverified_email")
