"""Identity-Aware Proxy's signed assertion: the only proof, behind IAP, of who signed in.

IAP sends every request it lets through with ``X-Goog-IAP-JWT-Assertion``, a JWT signed
(ES256) by IAP's keys, whose ``aud`` is the backend it guards (``/projects/NUMBER/global/
backendServices/ID``, or ``/projects/NUMBER/apps/PROJECT``) and whose ``email`` is the person.
The plain ``X-Goog-Authenticated-User-Email`` header proves nothing: any caller allowed to
invoke the service can write it (and a token of its own in ``X-Serverless-Authorization``,
which Cloud Run then checks instead of ``Authorization``). So the assertion is verified here:
signature against IAP's public keys (fetched, cached, fetched again for a key id not seen),
audience (``SCRAPEJOBS_IAP_AUDIENCE``), issuer, validity window.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping

import httpx
from google.auth import exceptions as auth_exceptions
from google.auth import jwt as google_jwt

from scrapejobs_shared.errors import NotAllowed, Unavailable

IAP_ISSUER = "https://cloud.google.com/iap"
IAP_KEYS_URL = "https://www.gstatic.com/iap/verify/public_key"  # PEM public keys by key id
IAP_HEADER = "x-goog-iap-jwt-assertion"
CLOCK_SKEW_S = 30
REFRESH_S = 3600.0  # keys are read again this often
REFETCH_AFTER_S = 60.0  # a key id not known: read again, at most this often

FetchKeys = Callable[[str], Awaitable[Mapping[str, str]]]


class BadAssertion(NotAllowed):
    """The assertion is not IAP's, not for this backend, or out of date."""


class KeysUnavailable(Unavailable):
    """IAP's public keys could not be read."""


async def fetch_keys(url: str) -> Mapping[str, str]:
    """IAP's keys over HTTPS (``KeysUnavailable`` when they cannot be read)."""
    try:
        async with httpx.AsyncClient(timeout=10.0, trust_env=False) as client:
            answer = await client.get(url)
            answer.raise_for_status()
            keys = answer.json()
    except (httpx.HTTPError, ValueError) as exc:
        raise KeysUnavailable(f"IAP's public keys could not be read: {exc}") from None
    if not isinstance(keys, dict) or not all(isinstance(v, str) for v in keys.values()):
        raise KeysUnavailable("IAP's public keys are not a map of PEM keys")
    return keys


class IapKeys:
    """IAP's public keys, read through ``fetch`` (an HTTP GET of ``url`` answering its JSON)."""

    def __init__(
        self, fetch: FetchKeys, url: str = IAP_KEYS_URL, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._fetch = fetch
        self._url = url
        self._clock = clock
        self._keys: Mapping[str, str] = {}
        self._read_at = float("-inf")
        self._lock = asyncio.Lock()

    async def current(self, key_id: str) -> Mapping[str, str]:
        now = self._clock()
        stale = now - self._read_at > REFRESH_S
        unknown = key_id not in self._keys and now - self._read_at > REFETCH_AFTER_S
        if stale or unknown:
            async with self._lock:
                if self._read_at < now:  # nobody read them while this one waited
                    self._keys = dict(await self._fetch(self._url))
                    self._read_at = self._clock()
        return self._keys


async def verified_email(assertion: str, keys: IapKeys, audience: str) -> str:
    """The e-mail of the person IAP signed in; :class:`BadAssertion` otherwise."""
    if not audience:
        raise BadAssertion("IAP is not configured here (SCRAPEJOBS_IAP_AUDIENCE)")
    try:
        header = google_jwt.decode_header(assertion)  # type: ignore[no-untyped-call]
    except (ValueError, auth_exceptions.GoogleAuthError) as exc:
        raise BadAssertion(f"not a JWT: {exc}") from None
    key_id = header.get("kid")
    if header.get("alg") != "ES256" or not isinstance(key_id, str):
        raise BadAssertion("not signed by IAP (ES256 with a key id)")
    certs = await keys.current(key_id)
    if key_id not in certs:
        raise BadAssertion("signed by a key IAP does not publish")
    try:
        claims = google_jwt.decode(  # type: ignore[no-untyped-call]
            assertion,
            certs={key_id: certs[key_id]},
            audience=audience,
            clock_skew_in_seconds=CLOCK_SKEW_S,
        )
    except (ValueError, auth_exceptions.GoogleAuthError) as exc:
        raise BadAssertion(str(exc)) from None
    if claims.get("iss") != IAP_ISSUER:
        raise BadAssertion(f"issuer is not {IAP_ISSUER}")
    email = claims.get("email")
    if not isinstance(email, str) or not email:
        raise BadAssertion("no e-mail in the assertion")
    return email.rpartition(":")[2]  # "accounts.google.com:person@example.com" in some
