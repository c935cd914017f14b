"""iam mode: an identity comes only from what was verified. Behind IAP, from IAP's signed
assertion (ES256, audience, issuer, validity: verified here against IAP's keys, served by a
real local HTTP server); else from the token Cloud Run checked at the edge. A made-up
``X-Goog-Authenticated-User-Email``, or an unchecked ``Authorization`` beside a token of the
caller's own in ``X-Serverless-Authorization``, never makes anyone else."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from support.memory_dispatcher import memory_client

AUDIENCE = "/projects/123456/global/backendServices/987"
IDENTITIES = {
    "ops@example.com": {"tenant": "default", "role": "admin"},
    "ann@example.com": {"tenant": "team-a", "role": "member"},
}
IAP_KEY = ec.generate_private_key(ec.SECP256R1())
OTHER_KEY = ec.generate_private_key(ec.SECP256R1())
JOB = {"url": "http://127.0.0.1:9/a"}


def pem(key: ec.EllipticCurvePrivateKey) -> str:
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return public.decode()


def assertion(
    email: str,
    *,
    key: ec.EllipticCurvePrivateKey = IAP_KEY,
    kid: str = "iap-1",
    **claims: Any,
) -> str:
    now = int(time.time())
    body = {
        "iss": "https://cloud.google.com/iap",
        "aud": AUDIENCE,
        "email": f"accounts.google.com:{email}",
        "sub": "accounts.google.com:1234",
        "iat": now,
        "exp": now + 600,
    } | claims
    return jwt.encode(body, key, algorithm="ES256", headers={"kid": kid})


def unsigned_token(email: str) -> str:
    """A Google-style token as Cloud Run hands it on (its signature replaced)."""

    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    claims = {"email": email, "aud": "https://dispatcher", "iss": "https://accounts.google.com"}
    return f"{part({'alg': 'RS256'})}.{part(claims)}.SIGNATURE_REMOVED_BY_GOOGLE"


@pytest.fixture(scope="module")
def keys_url() -> Iterator[str]:
    keys = json.dumps({"iap-1": pem(IAP_KEY)}).encode()

    class Keys(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(keys)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Keys)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/iap/verify/public_key"
    server.shutdown()
    server.server_close()


@pytest.fixture
async def api(keys_url: str) -> AsyncIterator[httpx.AsyncClient]:
    settings = DispatcherSettings(
        auth_mode="iam",
        identities=json.dumps(IDENTITIES),
        iap_audience=AUDIENCE,
        iap_keys_url=keys_url,
    )
    async with memory_client(MemoryJobStore(), settings) as client:
        yield client


async def test_a_forged_email_header_with_any_token_is_not_that_identity(
    api: httpx.AsyncClient,
) -> None:
    forged = {
        "X-Serverless-Authorization": f"Bearer {unsigned_token('intruder@example.com')}",
        "X-Goog-Authenticated-User-Email": "accounts.google.com:ops@example.com",
    }
    assert (await api.get("/v1/keys", headers=forged)).status_code == 403  # not ops: a member
    # an unchecked Authorization beside the caller's own checked token: the checked one counts
    beside = {
        "X-Serverless-Authorization": f"Bearer {unsigned_token('intruder@example.com')}",
        "Authorization": f"Bearer {unsigned_token('ops@example.com')}",
    }
    assert (await api.get("/v1/keys", headers=beside)).status_code == 403
    alone = {"X-Goog-Authenticated-User-Email": "accounts.google.com:ops@example.com"}
    assert (await api.get("/v1/keys", headers=alone)).status_code == 401


async def test_a_token_without_an_email_claim_is_refused_not_taken_for_the_default(
    api: httpx.AsyncClient,
) -> None:
    """The review: a mapped caller whose token lacked ``email`` became the default tenant's
    member; who sent it is not known, so it is a 401 saying why."""
    nameless = {"X-Serverless-Authorization": f"Bearer {unsigned_token('')}"}
    refused = await api.get("/v1/jobs", headers=nameless)
    assert refused.status_code == 401 and "no email claim" in refused.json()["error"]["message"]
    listed = {"X-Serverless-Authorization": f"Bearer {unsigned_token('someone@example.com')}"}
    assert (await api.get("/v1/jobs", headers=listed)).status_code == 200  # the default's member


async def test_a_valid_iap_assertion_maps_to_its_identitys_tenant_and_role(
    api: httpx.AsyncClient,
) -> None:
    iap = {"X-Serverless-Authorization": f"Bearer {unsigned_token('iap-agent@example.com')}"}
    ann = iap | {"X-Goog-IAP-JWT-Assertion": assertion("ann@example.com")}
    made = await api.post("/v1/jobs", json=JOB, headers=ann)
    assert made.status_code == 202 and made.json()["tenant"] == "team-a"
    assert (await api.get("/v1/keys", headers=ann)).status_code == 403  # a member
    ops = iap | {"X-Goog-IAP-JWT-Assertion": assertion("ops@example.com")}
    assert (await api.get("/v1/keys", headers=ops)).status_code == 200  # an admin


@pytest.mark.parametrize(
    "bad",
    [
        assertion("ops@example.com", aud="/projects/1/apps/other"),
        assertion("ops@example.com", key=OTHER_KEY),
        assertion("ops@example.com", kid="not-iap"),
        assertion("ops@example.com", iss="https://accounts.google.com"),
        assertion("ops@example.com", exp=int(time.time()) - 3600, iat=int(time.time()) - 7200),
        "not.a.jwt",
    ],
    ids=["audience", "signature", "key-id", "issuer", "expired", "garbage"],
)
async def test_an_assertion_that_does_not_verify_is_a_401(api: httpx.AsyncClient, bad: str) -> None:
    headers = {
        "X-Serverless-Authorization": f"Bearer {unsigned_token('ops@example.com')}",
        "X-Goog-IAP-JWT-Assertion": bad,
    }
    refused = await api.get("/v1/keys", headers=headers)
    assert refused.status_code == 401 and "IAP's assertion" in refused.text


async def test_without_an_iap_audience_an_assertion_is_refused(keys_url: str) -> None:
    settings = DispatcherSettings(auth_mode="iam", iap_keys_url=keys_url)
    async with memory_client(MemoryJobStore(), settings) as api:
        headers = {"X-Goog-IAP-JWT-Assertion": assertion("ops@example.com")}
        refused = await api.get("/v1/jobs", headers=headers)
        assert refused.status_code == 401 and "SCRAPEJOBS_IAP_AUDIENCE" in refused.text
