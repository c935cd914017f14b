"""API-key authentication for the dispatcher's REST API.

Keys are never stored: the dispatcher only knows their SHA-256 digests, configured as
a comma-separated list of 64-character hex strings in ``SCRAPEJOBS_API_KEY_HASHES``
(supplied from Secret Manager in production). Keys are created by
:func:`generate_api_key` with 256 bits of randomness, so a plain (unsalted, fast)
hash is appropriate: a leaked digest cannot be brute-forced back into a key.

Creating a key (operator), from the workspace root::

    uv run python -c "from scrapejobs_dispatcher.tenants.api_keys import generate_api_key; print(*generate_api_key())"

This prints ``<key> <sha256-hex>``. Hand the key to the client over a secure channel
and append the hash to the ``SCRAPEJOBS_API_KEY_HASHES`` secret (comma-separated),
then roll out a new revision. To revoke a key, remove its hash the same way.
"""  # noqa: E501

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import zlib
from collections.abc import Sequence

API_KEY_PREFIX = "sj_"
DIGEST_SIZE = hashlib.sha256().digest_size
MAX_PRESENTED_KEY_LENGTH = 1024
_HEX_DIGEST = re.compile(r"[0-9a-f]{64}")
_LEGACY_KEY = re.compile(r"sj_[A-Za-z0-9_-]{43}")
_KEY = re.compile(r"(sj_[A-Za-z0-9_-]{43})_([0-9a-f]{8})")


def hash_api_key(key: str) -> str:
    """Return the SHA-256 hex digest under which ``key`` is configured."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def parse_key_hashes(raw: str) -> tuple[bytes, ...]:
    """Parse ``SCRAPEJOBS_API_KEY_HASHES`` into raw 32-byte digests.

    Entries are comma-separated; surrounding whitespace and empty entries (e.g. a
    trailing comma) are ignored, hex case is not significant. A malformed entry raises
    ``ValueError`` naming its 1-based position only, never its value.
    """
    entries = [entry.strip().lower() for entry in raw.split(",")]
    digests: list[bytes] = []
    for position, entry in enumerate(entries, start=1):
        if not entry:
            continue
        if not _HEX_DIGEST.fullmatch(entry):
            raise ValueError(
                f"SCRAPEJOBS_API_KEY_HASHES entry #{position} is not a "
                "64-character hex SHA-256 digest"
            )
        digests.append(bytes.fromhex(entry))
    return tuple(digests)


class ApiKeyVerifier:
    """Checks presented API keys against the configured digests in constant time."""

    def __init__(self, hashes: Sequence[bytes]) -> None:
        if any(len(digest) != DIGEST_SIZE for digest in hashes):
            raise ValueError(f"API key digests must be {DIGEST_SIZE} raw bytes")
        self._hashes = tuple(hashes)

    def __repr__(self) -> str:
        return f"ApiKeyVerifier(<{len(self._hashes)} key digests>)"

    @property
    def digests(self) -> tuple[bytes, ...]:
        return self._hashes

    def verify(self, presented: str | None) -> bool:
        """True if ``presented`` is one of the configured keys."""
        return self.match(presented) is not None

    def match(self, presented: str | None) -> bytes | None:
        """The configured digest ``presented`` matches, or None.

        The presented key's digest is compared with *every* configured digest using
        ``hmac.compare_digest``, with no early exit, so timing reveals neither whether
        nor which key matched.
        """
        digest = _digest_of(presented)
        if digest is None:
            return None
        matched: bytes | None = None
        for stored in self._hashes:
            if hmac.compare_digest(digest, stored):
                matched = stored
        return matched


def _digest_of(presented: str | None) -> bytes | None:
    if not presented or len(presented) > MAX_PRESENTED_KEY_LENGTH:
        return None
    try:
        return hashlib.sha256(presented.encode("utf-8")).digest()
    except UnicodeEncodeError:
        return None


def generate_api_key() -> tuple[str, str]:
    """Return a new random key and its SHA-256 hex digest: ``sj_`` + 256 bits, URL-safe, then
    ``_`` and the CRC-32 of what precedes it (8 hex digits), so that a key made up or mistyped
    is told apart without a store read (as GitHub's tokens carry a checksum)."""
    body = API_KEY_PREFIX + secrets.token_urlsafe(32)
    key = f"{body}_{_checksum(body)}"
    return key, hash_api_key(key)


def plausible_key(presented: str) -> bool:
    """Whether ``presented`` has the shape of a key this API makes: with its checksum right,
    or a key made before keys had one (``sj_`` + 43 characters). Anything else cannot be in
    the store: refused without reading it."""
    if _LEGACY_KEY.fullmatch(presented):
        return True
    found = _KEY.fullmatch(presented)
    return found is not None and hmac.compare_digest(_checksum(found[1]), found[2])


def _checksum(body: str) -> str:
    return f"{zlib.crc32(body.encode('ascii')):08x}"
