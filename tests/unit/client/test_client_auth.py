"""Auth by constructor arguments: an API key as X-API-Key; a Google ID token (IAM mode) as a
bearer token for the API's URL, fetched once, again when near expiry and after a 401."""

from __future__ import annotations

import base64
import json

import httpx
import pytest

from scrapejobs_client import NO_RETRIES, Client
from scrapejobs_client.auth import GoogleIdTokenAuth, token_expiry

HEALTHZ = httpx.Response(200, json={"status": "ok"})


def jwt(exp: float) -> str:
    def part(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    return f"{part({'alg': 'RS256'})}.{part({'exp': exp, 'aud': 'x'})}.sig"


def test_api_key_header() -> None:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return HEALTHZ

    Client("http://api.test", api_key="sj_k", transport=httpx.MockTransport(handle)).ping()

    assert seen[0].headers["x-api-key"] == "sj_k" and "authorization" not in seen[0].headers
    assert "sj_k" not in repr(GoogleIdTokenAuth("a"))


def test_no_auth_sends_no_credentials() -> None:
    seen: list[httpx.Request] = []
    transport = httpx.MockTransport(lambda r: seen.append(r) or HEALTHZ)
    Client("http://api.test", transport=transport).ping()
    assert "x-api-key" not in seen[0].headers and "authorization" not in seen[0].headers


def test_both_is_refused() -> None:
    with pytest.raises(ValueError, match="not both"):
        Client("http://api.test", api_key="k", iam=True)


def test_iam_mode_sends_an_id_token_for_the_api_url_and_refreshes_it() -> None:
    now = [1_000.0]
    fetched: list[str] = []
    tokens = iter([jwt(now[0] + 3600), jwt(now[0] + 7200), jwt(now[0] + 9000)])

    def fetch(audience: str) -> str:
        fetched.append(audience)
        return next(tokens)

    seen: list[str] = []
    reject_next = [False]

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["authorization"])
        if reject_next[0]:
            reject_next[0] = False
            return httpx.Response(401, json={"error": {"message": "expired"}})
        return HEALTHZ

    auth = GoogleIdTokenAuth("https://api.run.app", fetch, clock=lambda: now[0])
    client = Client(
        "https://api.run.app", auth=auth, transport=httpx.MockTransport(handle), retry=NO_RETRIES
    )
    client.ping()
    client.ping()
    assert fetched == ["https://api.run.app"] and len(set(seen)) == 1

    now[0] += 3600 - 200  # within the refresh margin
    client.ping()
    assert len(fetched) == 2 and seen[-1] != seen[0]

    reject_next[0] = True
    client.ping()
    assert len(fetched) == 3 and seen[-2] != seen[-1]


def test_iam_flag_defaults_the_audience_to_the_api_url() -> None:
    audiences: list[str] = []

    def fetch(audience: str) -> str:
        audiences.append(audience)
        return "opaque-token"

    seen: list[httpx.Request] = []
    transport = httpx.MockTransport(lambda r: seen.append(r) or HEALTHZ)
    Client("https://api.run.app/", iam=True, token_fetcher=fetch, transport=transport).ping()

    assert audiences == ["https://api.run.app"]
    assert seen[0].headers["authorization"] == "Bearer opaque-token"
    assert token_expiry("opaque-token") is None and token_expiry(jwt(5.0)) == 5.0
