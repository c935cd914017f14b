"""Dashboard sign-in in api_key mode over in-memory adapters: the session cookie's flags and
lifetime, what ends a session (expiry, sign-out, the key's digest removed), where a sign-in may
send the browser next, cross-origin actions refused, htmx polls sent to the sign-in form."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from itsdangerous import URLSafeTimedSerializer

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_dispatcher.tenants.api_keys import (
    ApiKeyVerifier,
    generate_api_key,
    parse_key_hashes,
)
from scrapejobs_dispatcher.tenants.keyring import Keyring
from scrapejobs_dispatcher.ui.sessions import DashboardSessions, same_origin
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.session_revocations import MemorySessionRevocations
from scrapejobs_shared.domain.clock import utc_now
from support.memory_dispatcher import memory_dispatcher

KEY, DIGEST = generate_api_key()
OTHER_KEY, OTHER_DIGEST = generate_api_key()
SESSION_KEY = b"the deployment's session key, 32 bytes"


@asynccontextmanager
async def dashboard(
    mode: str = "api_key", hashes: str = DIGEST, base_url: str = "http://t"
) -> AsyncIterator[httpx.AsyncClient]:
    settings = DispatcherSettings(auth_mode=mode, api_key_hashes=hashes)
    app = memory_dispatcher(MemoryJobStore(), settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=base_url) as client:
            yield client


async def _sign_in(client: httpx.AsyncClient, key: str = KEY, **extra: str) -> httpx.Response:
    form = {"api_key": key, **extra}
    return await client.post("/ui/sign-in", data=form, headers={"Origin": str(client.base_url)})


async def test_no_session_is_sent_to_the_form_and_a_right_key_gets_a_strict_cookie() -> None:
    async with dashboard() as client:
        page = await client.get("/ui/hosts?x=1")
        assert page.status_code == 303
        assert page.headers["location"] == "/ui/sign-in?next=/ui/hosts%3Fx%3D1"
        form = await client.get("/ui/sign-in")
        assert form.status_code == 200 and 'type="password"' in form.text
        assert (await client.get("/ui/static/dashboard.css")).status_code == 200

        wrong = await _sign_in(client, "sj_wrong")
        assert wrong.status_code == 401 and "not valid" in wrong.text
        assert "set-cookie" not in wrong.headers

        right = await _sign_in(client, next="/ui/hosts")
        assert right.status_code == 303 and right.headers["location"] == "/ui/hosts"
        cookie = right.headers["set-cookie"]
        for flag in ("HttpOnly", "SameSite=strict", "Path=/ui", "Max-Age=43200"):
            assert flag.lower() in cookie.lower(), cookie
        assert "secure" not in cookie.lower()  # plain http
        assert (await client.get("/ui/hosts")).status_code == 200
        assert (await client.get("/v1/jobs")).status_code == 401  # the cookie is not a key

        out = await client.post("/ui/sign-out", headers={"Origin": "http://t"})
        assert out.status_code == 303 and 'scrapejobs_session=""' in out.headers["set-cookie"]
        client.cookies.clear()
        assert (await client.get("/ui")).status_code == 303


async def test_over_https_the_cookie_is_secure() -> None:
    async with dashboard(base_url="https://dash.example") as client:
        right = await _sign_in(client)
        assert "secure" in right.headers["set-cookie"].lower()
    async with dashboard() as client:  # TLS ended at the edge (Cloud Run)
        form = {"api_key": KEY}
        headers = {"X-Forwarded-Proto": "https", "Origin": "https://t"}
        right = await client.post("/ui/sign-in", data=form, headers=headers)
        assert "secure" in right.headers["set-cookie"].lower()


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/ui", "/v1/jobs"])
async def test_a_sign_in_never_sends_the_browser_off_the_dashboard(target: str) -> None:
    async with dashboard() as client:
        right = await _sign_in(client, next=target)
        assert right.headers["location"] == "/ui"


async def test_actions_from_another_origin_are_refused() -> None:
    async with dashboard() as client:
        await _sign_in(client)
        hx = {"HX-Request": "true"}
        evil = await client.post("/ui/dead-letters/replay", headers=hx | {"Origin": "http://x"})
        assert evil.status_code == 403
        cross = await client.post(
            "/ui/dead-letters/replay", headers=hx | {"Sec-Fetch-Site": "same-site"}
        )
        assert cross.status_code == 403
        own = await client.post("/ui/dead-letters/replay", headers=hx | {"Origin": "http://t"})
        assert own.status_code == 200
        sign_in_elsewhere = await client.post(
            "/ui/sign-in", data={"api_key": KEY}, headers={"Origin": "http://x"}
        )
        assert sign_in_elsewhere.status_code == 403


async def test_a_poll_without_a_session_is_sent_to_the_sign_in_form() -> None:
    async with dashboard() as client:
        poll = await client.get("/ui/fragments/overview", headers={"HX-Request": "true"})
        assert poll.status_code == 401 and poll.headers["hx-redirect"] == "/ui/sign-in"


async def test_a_proxy_sending_the_key_still_opens_the_dashboard() -> None:
    async with dashboard() as client:
        assert (await client.get("/ui", headers={"X-API-Key": KEY})).status_code == 200


async def test_without_api_keys_there_is_nothing_to_sign_in_to() -> None:
    async with dashboard(mode="none", hashes="") as client:
        assert (await client.get("/ui")).status_code == 200
        form = await client.get("/ui/sign-in")
        assert form.status_code == 303 and form.headers["location"] == "/ui"


def _sessions(verifier: ApiKeyVerifier, lifetime_s: int = 60) -> DashboardSessions:
    return DashboardSessions(
        Keyring(verifier, utc_now), lifetime_s, MemorySessionRevocations(), utc_now, SESSION_KEY
    )


def _signer(digest: bytes) -> URLSafeTimedSerializer:
    """How the deployment signs a session of the key whose stored digest is ``digest``."""
    signing = hmac.new(SESSION_KEY, digest, hashlib.sha256).digest()
    return URLSafeTimedSerializer(signing, salt="scrapejobs-dashboard-session")


async def test_a_session_ends_when_it_expires_or_its_key_is_removed() -> None:
    both = ApiKeyVerifier(parse_key_hashes(f"{DIGEST},{OTHER_DIGEST}"))
    sessions = _sessions(both)
    token = await sessions.sign_in(KEY)
    assert token is not None and await sessions.valid(token)
    assert await sessions.sign_in("sj_wrong") is None
    assert not await sessions.valid("forged.token")
    removed = _sessions(ApiKeyVerifier(parse_key_hashes(OTHER_DIGEST)))
    assert not await removed.valid(token)
    digest = bytes.fromhex(DIGEST)
    old = _signer(digest)
    key_id = "bootstrap-" + DIGEST[:12]
    stale = old.dumps({"sid": "s1", "kid": key_id})
    assert await _sessions(both).valid(stale)
    assert not await _sessions(both, lifetime_s=-1).valid(stale)  # past its lifetime
    assert not await _sessions(both).valid(old.dumps({"session": 1}))  # no session id
    assert not await _sessions(both).valid(old.dumps({"sid": "s1"}))  # no key named
    other_key = _signer(bytes.fromhex(OTHER_DIGEST))
    assert not await _sessions(both).valid(other_key.dumps({"sid": "s1", "kid": key_id}))


async def test_a_session_made_with_a_keys_stored_digest_alone_is_refused() -> None:
    """Whoever reads the key store (its digests) cannot sign a session: the deployment's
    session key is part of the signature."""
    keys = Keyring(ApiKeyVerifier(parse_key_hashes(DIGEST)), utc_now)
    sessions = DashboardSessions(keys, 60, MemorySessionRevocations(), utc_now, SESSION_KEY)
    token = await sessions.sign_in(KEY)
    assert token is not None and await sessions.valid(token)
    key_id = (await keys.known(KEY)).caller.key_id  # type: ignore[union-attr]
    forged = URLSafeTimedSerializer(bytes.fromhex(DIGEST), salt="scrapejobs-dashboard-session")
    assert not await sessions.valid(forged.dumps({"sid": "s1", "kid": key_id}))
    other_deployment = DashboardSessions(keys, 60, MemorySessionRevocations(), utc_now, b"x" * 32)
    assert not await other_deployment.valid(token)


async def test_signing_out_ends_the_session_on_every_instance() -> None:
    keys = Keyring(ApiKeyVerifier(parse_key_hashes(DIGEST)), utc_now)
    shared = MemorySessionRevocations()
    here = DashboardSessions(keys, 60, shared, utc_now, SESSION_KEY)
    there = DashboardSessions(keys, 60, shared, utc_now, SESSION_KEY)
    token, other = await here.sign_in(KEY), await here.sign_in(KEY)
    assert await here.valid(token) and await there.valid(other)
    await there.sign_out(token)
    assert not await there.valid(token)
    # the other instance found it live a moment ago: it rechecks within a few seconds
    here_later = DashboardSessions(keys, 60, shared, utc_now, SESSION_KEY)
    assert not await here_later.valid(token)
    assert await here_later.valid(other)  # another session of the same key lives on


async def test_a_copied_cookie_dies_with_its_sign_out() -> None:
    async with dashboard() as client:
        right = await _sign_in(client)
        cookie = right.cookies["scrapejobs_session"]
        assert (await client.get("/ui")).status_code == 200
        await client.post("/ui/sign-out", headers={"Origin": "http://t"})
        client.cookies.clear()
        client.cookies.set("scrapejobs_session", cookie)  # kept by someone before sign-out
        copied = await client.get("/ui")
        assert copied.status_code == 303  # sent to the sign-in form


async def test_sign_in_attempts_are_limited_per_client() -> None:
    async with dashboard() as client:
        for _ in range(10):
            assert (await _sign_in(client, "sj_wrong")).status_code == 401
        limited = await _sign_in(client, KEY)
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
        assert "set-cookie" not in limited.headers
        # another client address (the one Cloud Run's front end appends) is not held back
        elsewhere = await client.post(
            "/ui/sign-in",
            data={"api_key": KEY},
            headers={"Origin": "http://t", "X-Forwarded-For": "203.0.113.9, 198.51.100.7"},
        )
        assert elsewhere.status_code == 303


async def test_a_sign_in_form_is_read_only_up_to_a_few_kilobytes() -> None:
    async with dashboard() as client:
        big = await client.post(
            "/ui/sign-in",
            content=b"api_key=" + b"a" * 100_000,
            headers={"Origin": "http://t", "Content-Type": "application/x-www-form-urlencoded"},
        )
        assert big.status_code == 413


async def test_pages_forbid_framing_and_foreign_scripts() -> None:
    async with dashboard(mode="none", hashes="") as client:
        for path in ("/ui", "/ui/hosts", "/ui/dead-letters"):
            headers = (await client.get(path)).headers
            policy = headers["content-security-policy"]
            assert "frame-ancestors 'none'" in policy and "script-src 'self'" in policy
            assert headers["x-frame-options"] == "DENY"
            assert headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    ("headers", "same"),
    [
        ({"host": "d.example", "origin": "http://d.example"}, True),
        ({"host": "d.example", "origin": "http://d.example:81"}, False),
        ({"host": "d.example", "origin": "null"}, False),
        ({"host": "d.example", "sec-fetch-site": "cross-site"}, False),
        ({"host": "d.example", "sec-fetch-site": "same-site"}, False),  # another port
        ({"host": "d.example", "sec-fetch-site": "same-origin"}, True),
        # behind a proxy that rewrites Host, the browser's own verdict holds
        (
            {
                "host": "svc.run.app",
                "origin": "http://localhost:8080",
                "sec-fetch-site": "same-origin",
            },
            True,
        ),
        ({"host": "svc.run.app", "origin": "http://evil:1", "sec-fetch-site": "cross-site"}, False),
        ({"host": "d.example"}, True),  # curl, the CLI: no browser, no cookie to abuse
    ],
)
def test_what_counts_as_the_dashboard_s_own_origin(headers: dict[str, str], same: bool) -> None:
    assert same_origin("http", headers) is same
