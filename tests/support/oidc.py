"""Google-style OIDC ID tokens signed by locally generated RSA keys, for tests.

``SIGNING_KEY`` plays Google's current signing key; ``JWKS`` is the matching public
JWKS document (as served at https://www.googleapis.com/oauth2/v3/certs).
``sign_id_token`` signs claims of your choosing; ``id_token_claims`` builds the claims
of a valid Pub/Sub push token, with overrides (``OMIT`` removes a claim).
"""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

AUDIENCE = "https://worker.example.test/pubsub/push"
SERVICE_ACCOUNT_EMAIL = "pubsub-push@scrapejobs-test.iam.gserviceaccount.com"
ISSUER = "https://accounts.google.com"
TOKEN_LIFETIME_S = 3600

OMIT: Any = object()
"""Pass as a claim override to leave the claim out of the token."""


@dataclass(frozen=True)
class SigningKey:
    kid: str
    private_key: rsa.RSAPrivateKey

    @property
    def public_key(self) -> rsa.RSAPublicKey:
        return self.private_key.public_key()

    def jwk(self) -> dict[str, Any]:
        """The public half as a JWK, shaped like Google's entries."""
        jwk: dict[str, Any] = RSAAlgorithm.to_jwk(self.public_key, as_dict=True)
        return {**jwk, "kid": self.kid, "alg": "RS256", "use": "sig"}


def generate_signing_key(kid: str) -> SigningKey:
    return SigningKey(kid, rsa.generate_private_key(public_exponent=65537, key_size=2048))


def jwks_for(*keys: SigningKey) -> dict[str, Any]:
    """A JWKS document publishing the public halves of ``keys``."""
    return {"keys": [key.jwk() for key in keys]}


SIGNING_KEY = generate_signing_key("test-key-1")
JWKS = jwks_for(SIGNING_KEY)


def id_token_claims(now: float | None = None, **overrides: Any) -> dict[str, Any]:
    """Claims of a valid push token issued at ``now``; overrides replace or OMIT claims."""
    issued_at = int(time.time() if now is None else now)
    claims: dict[str, Any] = {
        "aud": AUDIENCE,
        "azp": "108234567890123456789",
        "email": SERVICE_ACCOUNT_EMAIL,
        "email_verified": True,
        "exp": issued_at + TOKEN_LIFETIME_S,
        "iat": issued_at,
        "iss": ISSUER,
        "sub": "108234567890123456789",
    }
    claims.update(overrides)
    return {name: value for name, value in claims.items() if value is not OMIT}


def sign_id_token(
    claims: dict[str, Any] | None = None,
    *,
    key: SigningKey = SIGNING_KEY,
    kid: str | None = None,
) -> str:
    """An RS256 JWT over ``claims`` (default: valid push claims) with ``kid`` in its header."""
    payload = id_token_claims() if claims is None else claims
    headers = {"kid": key.kid if kid is None else kid}
    return jwt.encode(payload, key.private_key, algorithm="RS256", headers=headers)


def encode_token(header: dict[str, Any], claims: dict[str, Any], signature: bytes = b"") -> str:
    """Assemble ``header.payload.signature`` by hand (for forged / unsigned tokens)."""
    return ".".join(
        (
            _b64url(json.dumps(header).encode()),
            _b64url(json.dumps(claims).encode()),
            _b64url(signature),
        )
    )


def signing_input(token: str) -> bytes:
    """The ``header.payload`` part a signature is computed over."""
    return token.rsplit(".", 1)[0].encode()


def strip_signature(token: str, replacement: str = "") -> str:
    """What Cloud Run forwards after validating a token: the signature removed."""
    return f"{token.rsplit('.', 1)[0]}.{replacement}"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
