"""Pub/Sub push authentication: OIDC token checks (scrapejobs_worker.delivery.push_auth)."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization

from scrapejobs_worker.delivery.push_auth import (
    CachedJwks,
    KeySource,
    PushAuthError,
    PushAuthPolicy,
    StaticJwks,
    verify_push_token,
)
from support.oidc import (
    AUDIENCE,
    JWKS,
    OMIT,
    SERVICE_ACCOUNT_EMAIL,
    SIGNING_KEY,
    encode_token,
    generate_signing_key,
    id_token_claims,
    jwks_for,
    sign_id_token,
    signing_input,
    strip_signature,
)

NOW = 1_800_000_000.0
POLICY = PushAuthPolicy(audience=AUDIENCE, service_account_email=SERVICE_ACCOUNT_EMAIL)
EDGE_POLICY = dataclasses.replace(POLICY, verify_signature=False)
KEYS = StaticJwks(JWKS)


def claims(**overrides: Any) -> dict[str, Any]:
    return id_token_claims(now=NOW, **overrides)


def bearer(token: str) -> str:
    return f"Bearer {token}"


def verify(
    header: str | None, policy: PushAuthPolicy = POLICY, keys: KeySource | None = KEYS
) -> dict[str, Any]:
    return verify_push_token(header, policy, keys, now=NOW)


def assert_rejected(
    reason: str,
    header: str | None,
    policy: PushAuthPolicy = POLICY,
    keys: KeySource | None = KEYS,
) -> None:
    with pytest.raises(PushAuthError) as caught:
        verify(header, policy, keys)
    assert caught.value.reason == reason


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class CountingFetch:
    """Serves JWKS documents in turn (the last one repeatedly) and counts fetches."""

    def __init__(self, *documents: dict[str, Any]) -> None:
        self.documents = list(documents)
        self.calls = 0

    def __call__(self) -> dict[str, Any]:
        self.calls += 1
        return self.documents[min(self.calls, len(self.documents)) - 1]


# --- valid tokens -------------------------------------------------------------------


def test_valid_token_returns_its_claims() -> None:
    expected = claims()
    assert verify(bearer(sign_id_token(expected))) == expected


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "BeArEr"])
def test_bearer_scheme_is_case_insensitive(scheme: str) -> None:
    assert verify(f"{scheme} {sign_id_token(claims())}")["email"] == SERVICE_ACCOUNT_EMAIL


def test_email_comparison_is_case_insensitive() -> None:
    token = sign_id_token(claims(email=SERVICE_ACCOUNT_EMAIL.upper()))
    assert verify(bearer(token))


def test_email_verified_string_true_is_accepted() -> None:
    assert verify(bearer(sign_id_token(claims(email_verified="true"))))


def test_both_google_issuer_spellings_are_accepted() -> None:
    for issuer in ("https://accounts.google.com", "accounts.google.com"):
        assert verify(bearer(sign_id_token(claims(iss=issuer))))


def test_expiry_within_leeway_is_accepted() -> None:
    assert verify(bearer(sign_id_token(claims(exp=NOW - POLICY.leeway_s + 1))))


# --- malformed requests -------------------------------------------------------------


@pytest.mark.parametrize("header", [None, "", "   "])
def test_missing_header_is_rejected(header: str | None) -> None:
    assert_rejected("missing_token", header)


@pytest.mark.parametrize(
    "header",
    ["Basic dXNlcjpwYXNz", "Token abc", "Bearer", "Bearer    ", "Bearer a b"],
)
def test_non_bearer_or_empty_bearer_is_rejected(header: str) -> None:
    assert_rejected("malformed_token", header)


def test_bare_token_without_scheme_is_rejected() -> None:
    assert_rejected("malformed_token", sign_id_token(claims()))


@pytest.mark.parametrize("token", ["garbage", "a.b.c", "a.b", "....", "e30.e30.e30.e30"])
@pytest.mark.parametrize("policy", [POLICY, EDGE_POLICY], ids=["verified", "edge"])
def test_garbage_token_is_rejected(token: str, policy: PushAuthPolicy) -> None:
    assert_rejected("malformed_token", bearer(token), policy)


# --- claim checks -------------------------------------------------------------------


@pytest.mark.parametrize("aud", ["https://other.example/push", "", [AUDIENCE], OMIT])
def test_wrong_audience_is_rejected(aud: Any) -> None:
    assert_rejected("wrong_audience", bearer(sign_id_token(claims(aud=aud))))


@pytest.mark.parametrize("iss", ["https://evil.example", "https://accounts.google.com/", OMIT])
def test_wrong_issuer_is_rejected(iss: Any) -> None:
    assert_rejected("wrong_issuer", bearer(sign_id_token(claims(iss=iss))))


@pytest.mark.parametrize("email", ["attacker@evil.iam.gserviceaccount.com", "", None, ["x"], OMIT])
def test_foreign_email_is_rejected(email: Any) -> None:
    assert_rejected("foreign_email", bearer(sign_id_token(claims(email=email))))


@pytest.mark.parametrize("verified", [False, "false", "True ", 1, None, OMIT])
def test_unverified_email_is_rejected(verified: Any) -> None:
    token = sign_id_token(claims(email_verified=verified))
    assert_rejected("unverified_email", bearer(token))


def test_expired_token_is_rejected() -> None:
    token = sign_id_token(claims(exp=NOW - POLICY.leeway_s - 1))
    assert_rejected("expired", bearer(token))


def test_token_issued_in_the_future_is_rejected() -> None:
    token = sign_id_token(claims(iat=NOW + 3600, exp=NOW + 7200))
    assert_rejected("expired", bearer(token))


def test_token_not_yet_valid_is_rejected() -> None:
    assert_rejected("expired", bearer(sign_id_token(claims(nbf=NOW + 3600))))


@pytest.mark.parametrize("name", ["exp", "iat"])
@pytest.mark.parametrize("value", [OMIT, "1800000000", True, float("inf"), 10**400])
def test_missing_or_non_numeric_time_claims_are_rejected(name: str, value: Any) -> None:
    token = sign_id_token(claims(**{name: value}))
    assert_rejected("malformed_token", bearer(token))


def test_error_message_does_not_echo_the_token() -> None:
    token = sign_id_token(claims(email="attacker@evil.example"))
    with pytest.raises(PushAuthError) as caught:
        verify(bearer(token))
    assert token not in str(caught.value)
    assert "attacker" not in str(caught.value)


# --- signatures ---------------------------------------------------------------------


def test_token_signed_by_another_key_is_rejected() -> None:
    impostor = generate_signing_key(SIGNING_KEY.kid)  # same kid, different key
    assert_rejected("bad_signature", bearer(sign_id_token(claims(), key=impostor)))


def test_tampered_payload_is_rejected() -> None:
    genuine = sign_id_token(claims())
    forged = encode_token(
        {"alg": "RS256", "kid": SIGNING_KEY.kid},
        claims(email="attacker@evil.example"),
    )
    tampered = f"{forged.rsplit('.', 1)[0]}.{genuine.rsplit('.', 1)[1]}"
    assert_rejected("bad_signature", bearer(tampered))


def test_unsigned_token_is_rejected_when_verifying() -> None:
    assert_rejected("bad_signature", bearer(strip_signature(sign_id_token(claims()))))


@pytest.mark.parametrize("alg", ["none", "None", "NONE"])
def test_alg_none_is_rejected(alg: str) -> None:
    token = encode_token({"alg": alg, "kid": SIGNING_KEY.kid, "typ": "JWT"}, claims())
    assert_rejected("bad_signature", bearer(token))


def test_hs256_signed_with_the_public_key_is_rejected() -> None:
    # Classic algorithm confusion: HMAC keyed with the (public) RSA key material.
    public_pem = SIGNING_KEY.public_key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    unsigned = encode_token({"alg": "HS256", "kid": SIGNING_KEY.kid, "typ": "JWT"}, claims())
    mac = hmac.new(public_pem, signing_input(unsigned), hashlib.sha256).digest()
    forged = encode_token({"alg": "HS256", "kid": SIGNING_KEY.kid, "typ": "JWT"}, claims(), mac)
    assert_rejected("bad_signature", bearer(forged))


def test_token_without_kid_is_rejected() -> None:
    token = encode_token({"alg": "RS256"}, claims(), b"sig")
    assert_rejected("bad_signature", bearer(token))


def test_unknown_kid_is_rejected_by_static_jwks() -> None:
    token = sign_id_token(claims(), kid="not-published")
    assert_rejected("bad_signature", bearer(token))


def test_verifying_without_a_key_source_is_a_configuration_error() -> None:
    with pytest.raises(ValueError):
        verify(bearer(sign_id_token(claims())), POLICY, None)


def test_static_jwks_ignores_unusable_entries() -> None:
    other = generate_signing_key("enc-key")
    document = {
        "keys": [
            SIGNING_KEY.jwk(),
            {**other.jwk(), "use": "enc"},
            {**other.jwk(), "kid": "hs", "alg": "HS256"},
            {"kty": "oct", "kid": "secret", "k": "c2VjcmV0"},
            {"kty": "RSA", "kid": "broken", "n": "!!", "e": "AQAB"},
            "not-a-key",
        ]
    }
    assert StaticJwks(document).kids == {SIGNING_KEY.kid}


@pytest.mark.parametrize("document", [{}, {"keys": "nope"}, []])
def test_static_jwks_rejects_a_malformed_document(document: Any) -> None:
    with pytest.raises(ValueError):
        StaticJwks(document)


# --- cached JWKS --------------------------------------------------------------------


def test_cached_jwks_fetches_once_and_caches() -> None:
    fetch = CountingFetch(JWKS)
    keys = CachedJwks(fetch)
    for _ in range(3):
        assert verify(bearer(sign_id_token(claims())), keys=keys)
    assert fetch.calls == 1


def test_unknown_kid_triggers_one_refetch_then_is_rejected() -> None:
    fetch = CountingFetch(JWKS)
    keys = CachedJwks(fetch, clock=FakeClock())
    assert verify(bearer(sign_id_token(claims())), keys=keys)
    assert fetch.calls == 1

    assert_rejected("bad_signature", bearer(sign_id_token(claims(), kid="unknown")), keys=keys)
    assert fetch.calls == 2


def test_unknown_kid_on_first_use_does_not_fetch_twice() -> None:
    fetch = CountingFetch(JWKS)
    keys = CachedJwks(fetch, clock=FakeClock())
    assert_rejected("bad_signature", bearer(sign_id_token(claims(), kid="unknown")), keys=keys)
    assert fetch.calls == 1


def test_unknown_kid_refetches_are_rate_limited() -> None:
    clock = FakeClock()
    fetch = CountingFetch(JWKS)
    keys = CachedJwks(fetch, clock=clock, min_refetch_interval_s=30)
    verify(bearer(sign_id_token(claims())), keys=keys)
    unknown = bearer(sign_id_token(claims(), kid="unknown"))
    for _ in range(5):
        assert_rejected("bad_signature", unknown, keys=keys)
    assert fetch.calls == 2

    clock.now += 30
    assert_rejected("bad_signature", unknown, keys=keys)
    assert fetch.calls == 3


def test_key_rotation_is_picked_up() -> None:
    rotated = generate_signing_key("test-key-2")
    fetch = CountingFetch(JWKS, jwks_for(SIGNING_KEY, rotated))
    keys = CachedJwks(fetch, clock=FakeClock())
    assert verify(bearer(sign_id_token(claims())), keys=keys)

    assert verify(bearer(sign_id_token(claims(), key=rotated)), keys=keys)
    assert verify(bearer(sign_id_token(claims())), keys=keys)
    assert fetch.calls == 2


def test_cache_expires_after_ttl() -> None:
    clock = FakeClock()
    fetch = CountingFetch(JWKS)
    keys = CachedJwks(fetch, ttl_s=3600, clock=clock)
    verify(bearer(sign_id_token(claims())), keys=keys)
    clock.now += 3599
    verify(bearer(sign_id_token(claims())), keys=keys)
    assert fetch.calls == 1
    clock.now += 1
    verify(bearer(sign_id_token(claims())), keys=keys)
    assert fetch.calls == 2


def test_retired_key_is_rejected_after_refresh() -> None:
    clock = FakeClock()
    successor = generate_signing_key("test-key-2")
    keys = CachedJwks(CountingFetch(JWKS, jwks_for(successor)), ttl_s=60, clock=clock)
    verify(bearer(sign_id_token(claims())), keys=keys)
    clock.now += 60
    assert_rejected("bad_signature", bearer(sign_id_token(claims())), keys=keys)


def test_failed_refresh_keeps_cached_keys() -> None:
    clock = FakeClock()
    calls = 0

    def flaky_fetch() -> dict[str, Any]:
        nonlocal calls
        calls += 1
        if calls > 1:
            raise OSError("JWKS endpoint unreachable")
        return JWKS

    keys = CachedJwks(flaky_fetch, ttl_s=60, retry_after_s=10, clock=clock)
    verify(bearer(sign_id_token(claims())), keys=keys)
    clock.now += 60
    assert verify(bearer(sign_id_token(claims())), keys=keys)
    assert calls == 2
    clock.now += 5
    assert verify(bearer(sign_id_token(claims())), keys=keys)
    assert calls == 2  # waits retry_after_s before trying again
    clock.now += 5
    verify(bearer(sign_id_token(claims())), keys=keys)
    assert calls == 3


def test_fetch_failure_without_cached_keys_propagates() -> None:
    def failing_fetch() -> dict[str, Any]:
        raise OSError("JWKS endpoint unreachable")

    with pytest.raises(OSError):
        verify(bearer(sign_id_token(claims())), keys=CachedJwks(failing_fetch))


# --- behind Cloud Run IAM (signature already checked at the edge) ------------------


@pytest.mark.parametrize("replacement", ["", "SIGNATURE_REMOVED_BY_GOOGLE"])
def test_edge_mode_accepts_stripped_signature(replacement: str) -> None:
    expected = claims()
    token = strip_signature(sign_id_token(expected), replacement)
    assert verify(bearer(token), EDGE_POLICY, keys=None) == expected


def test_edge_mode_still_rejects_wrong_audience() -> None:
    token = strip_signature(sign_id_token(claims(aud="https://other.example/push")))
    assert_rejected("wrong_audience", bearer(token), EDGE_POLICY, keys=None)


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        ({"iss": "https://evil.example"}, "wrong_issuer"),
        ({"exp": NOW - 3600}, "expired"),
        ({"email": "attacker@evil.example"}, "foreign_email"),
        ({"email_verified": False}, "unverified_email"),
    ],
)
def test_edge_mode_still_checks_claims(overrides: dict[str, Any], reason: str) -> None:
    token = strip_signature(sign_id_token(claims(**overrides)))
    assert_rejected(reason, bearer(token), EDGE_POLICY, keys=None)


# --- policy -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "changes",
    [{"audience": ""}, {"service_account_email": ""}, {"issuers": ()}, {"leeway_s": -1}],
)
def test_policy_rejects_nonsense(changes: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        dataclasses.replace(POLICY, **changes)
