"""Dashboard sessions in ``api_key`` mode: a person types the API key once and gets a signed,
expiring cookie (itsdangerous) that opens ``/ui`` and nothing else (``/v1`` keeps requiring
``X-API-Key``).

The cookie is signed with the stored digest of the key that signed in, so it needs no secret
of its own (every instance can check it) and removing a key's digest from
``SCRAPEJOBS_API_KEY_HASHES`` ends that key's sessions at once. A digest is as unguessable as
the 256-bit key it was made from and lives only in Secret Manager, as a session secret would.

Cross-site requests: every POST under ``/ui`` must come from the dashboard's own origin
(``Sec-Fetch-Site``, else ``Origin``): the cookie is ``SameSite=Strict``, but another port on
the same host is the same *site* to a browser, and a form there could post to the dashboard."""

from __future__ import annotations

from collections.abc import Mapping

from itsdangerous import BadSignature, URLSafeTimedSerializer

from scrapejobs_dispatcher.api_keys import ApiKeyVerifier

COOKIE = "scrapejobs_session"
COOKIE_PATH = "/ui"
_SALT = "scrapejobs-dashboard-session"


class DashboardSessions:
    def __init__(self, keys: ApiKeyVerifier, lifetime_s: int) -> None:
        self._keys = keys
        self.lifetime_s = lifetime_s

    def sign_in(self, presented_key: str) -> str | None:
        """A session token for a valid key; None for any other."""
        digest = self._keys.match(presented_key)
        if digest is None:
            return None
        return URLSafeTimedSerializer(digest, salt=_SALT).dumps({"session": 1})

    def valid(self, token: str | None) -> bool:
        """True for a token one of the configured keys signed within the lifetime."""
        if not token or not self._keys.digests or len(token) > 512:
            return False
        checker = URLSafeTimedSerializer(list(self._keys.digests), salt=_SALT)
        try:
            checker.loads(token, max_age=self.lifetime_s)
        except BadSignature:  # a bad or expired signature (SignatureExpired is one)
            return False
        return True


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
