"""Dashboard sessions in ``api_key`` mode: a person types the API key once and gets a signed,
expiring cookie (itsdangerous) that opens ``/ui`` and nothing else (``/v1`` keeps requiring
``X-API-Key``).

The cookie names the key that signed in (its id) and is signed with an HMAC of that key's
stored digest under the deployment's session key (``SCRAPEJOBS_SESSION_KEY``, Secret Manager):
every instance can check it, revoking the key (``DELETE /v1/keys/{id}``, or removing a bootstrap
digest from ``SCRAPEJOBS_API_KEY_HASHES``) ends its sessions, and whoever can read the stored
digests (the key store) still cannot make a session. Without a session key (local development)
each process draws one at start: sessions then last as long as the process. A session is its
key's caller: the dashboard shows that key's tenant's work (an admin's: every tenant's).

Each session has an id of its own; signing out revokes it on every instance (the id is kept in
the store, ``SessionRevocations``, until the session would have expired): a copied cookie dies
with its sign-out. An instance takes another's revocation within
:data:`REVOCATION_RECHECK_S`.

Sign-in attempts are limited per client address (:class:`SignInAttempts`: at most
``attempts`` in ``window_s`` per instance), so a key cannot be guessed at the rate a form can
be posted; the form's body is read up to :data:`MAX_FORM_BYTES` only.

Cross-site requests: every POST under ``/ui`` must come from the dashboard's own origin
(``Sec-Fetch-Site``, else ``Origin``): the cookie is ``SameSite=Strict``, but another port on
the same host is the same *site* to a browser, and a form there could post to the dashboard."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import deque
from collections.abc import Mapping
from datetime import datetime, timedelta

from itsdangerous import BadSignature, URLSafeTimedSerializer

from scrapejobs_dispatcher.tenants.keyring import Keyring
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.tenancy import Caller, Role
from scrapejobs_shared.ports.session_revocations import SessionRevocations

COOKIE = "scrapejobs_session"
COOKIE_PATH = "/ui"
_SALT = "scrapejobs-dashboard-session"
REVOCATION_RECHECK_S = 5.0  # a session found live is checked again after this long
MAX_FORM_BYTES = 4096  # the sign-in form: a key and the page to go back to


class DashboardSessions:
    def __init__(
        self,
        keys: Keyring,
        lifetime_s: int,
        revocations: SessionRevocations,
        clock: Clock,
        secret: bytes = b"",
    ) -> None:
        """``secret``: the deployment's session key (empty: one drawn for this process)."""
        self._secret = secret or secrets.token_bytes(32)
        self._keys = keys
        self.lifetime_s = lifetime_s
        self._revocations = revocations
        self._clock = clock
        self._live_until: dict[str, float] = {}  # session id → monotonic time to recheck

    async def sign_in(self, presented_key: str) -> str | None:
        """A session token for a valid key (of a member or an admin); None for any other."""
        known = await self._keys.known(presented_key)
        if known is None or known.caller.key_id is None or not _may_view(known.caller):
            return None
        session = {"sid": secrets.token_urlsafe(16), "kid": known.caller.key_id}
        return self._serializer(known.digest).dumps(session)

    async def valid(self, token: str | None) -> Caller | None:
        """The caller of a token a live key signed within the lifetime, whose session was not
        signed out; None for any other."""
        opened = await self._open(token)
        if opened is None:
            return None
        session_id, _, caller = opened
        if self._live_until.get(session_id, 0.0) > time.monotonic():
            return caller
        if await self._revocations.revoked(session_id, self._clock()):
            return None
        if len(self._live_until) > 10_000:
            self._live_until.clear()
        self._live_until[session_id] = time.monotonic() + REVOCATION_RECHECK_S
        return caller

    async def sign_out(self, token: str | None) -> None:
        """End the token's session on every instance (nothing for a token that is not one)."""
        opened = await self._open(token)
        if opened is None:
            return
        session_id, signed_at, _ = opened
        self._live_until.pop(session_id, None)
        until = signed_at + timedelta(seconds=max(self.lifetime_s, 0) + 60)
        await self._revocations.revoke(session_id, until)

    async def _open(self, token: str | None) -> tuple[str, datetime, Caller] | None:
        """The session id, signing time and caller of a token its key (still live) signed
        within the lifetime; None otherwise."""
        if not token or len(token) > 512:
            return None
        serializer = URLSafeTimedSerializer(b"", salt=_SALT)
        _, claimed = serializer.loads_unsafe(token)  # which key to check it with
        key_id = claimed.get("kid") if isinstance(claimed, dict) else None
        if not isinstance(key_id, str) or not key_id or len(key_id) > 64:
            return None  # a token from before sessions named their key: sign in again
        known = await self._keys.by_id(key_id)
        if known is None or not _may_view(known.caller):
            return None
        checker = self._serializer(known.digest)
        try:
            payload, signed_at = checker.loads(
                token, max_age=self.lifetime_s, return_timestamp=True
            )
        except BadSignature:  # a bad or expired signature (SignatureExpired is one)
            return None
        session_id = payload.get("sid") if isinstance(payload, dict) else None
        if not isinstance(session_id, str) or not session_id or payload.get("kid") != key_id:
            return None
        return session_id, signed_at, known.caller

    def _serializer(self, digest: bytes) -> URLSafeTimedSerializer:
        """What signs a session of the key whose stored digest is ``digest``."""
        signing = hmac.new(self._secret, digest, hashlib.sha256).digest()
        return URLSafeTimedSerializer(signing, salt=_SALT)


def _may_view(caller: Caller) -> bool:
    """The dashboard is for members and admins (a scheduler key has no business there)."""
    return caller.role in (Role.MEMBER, Role.ADMIN)


class SignInAttempts:
    """At most ``attempts`` sign-ins per client address in ``window_s`` (per instance)."""

    def __init__(self, attempts: int = 10, window_s: float = 60.0) -> None:
        self._attempts = attempts
        self._window_s = window_s
        self._seen: dict[str, deque[float]] = {}

    def retry_after_s(self, client: str) -> float:
        """0 when ``client`` may try now (the attempt is counted), else the seconds to wait."""
        now = time.monotonic()
        if len(self._seen) > 10_000:
            self._seen.clear()
        recent = self._seen.setdefault(client, deque())
        while recent and recent[0] <= now - self._window_s:
            recent.popleft()
        if len(recent) >= self._attempts:
            return recent[0] + self._window_s - now
        recent.append(now)
        return 0.0


def client_address(host: str | None, headers: Mapping[str, str]) -> str:
    """Who is signing in: the last address of ``X-Forwarded-For``, the one Cloud Run's front end
    appends (those before it are the client's to write), else the peer."""
    forwarded = headers.get("x-forwarded-for", "").split(",")[-1].strip()
    return forwarded or host or ""


def own_origin(scheme: str, headers: Mapping[str, str]) -> str:
    """The origin this request was sent to (Cloud Run terminates TLS: X-Forwarded-Proto)."""
    forwarded = headers.get("x-forwarded-proto", "").split(",")[0].strip()
    return f"{forwarded or scheme}://{headers.get('host', '')}"


def same_origin(scheme: str, headers: Mapping[str, str]) -> bool:
    """A request the dashboard's own pages sent (or a non-browser client: neither header);
    False for one another origin's page made the browser send. The browser's own
    ``Sec-Fetch-Site`` decides when it is there: it holds behind proxies that rewrite Host
    (``gcloud run services proxy`` serves the dashboard on localhost); else ``Origin`` must be
    the origin this request was sent to."""
    fetch_site = headers.get("sec-fetch-site")
    if fetch_site is not None:
        return fetch_site in ("same-origin", "none")
    origin = headers.get("origin")
    return origin is None or origin == own_origin(scheme, headers)


def is_secure(scheme: str, headers: Mapping[str, str]) -> bool:
    return own_origin(scheme, headers).startswith("https://")
