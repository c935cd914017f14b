"""Dispatcher API keys: hashed storage and constant-time verification."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from scrapejobs_dispatcher.tenants.api_keys import (
    ApiKeyVerifier,
    generate_api_key,
    hash_api_key,
    parse_key_hashes,
)

KEY = "sj_correct-horse-battery-staple"
OTHER_KEY = "sj_another-valid-key"


def verifier_for(*keys: str) -> ApiKeyVerifier:
    return ApiKeyVerifier(parse_key_hashes(",".join(hash_api_key(key) for key in keys)))


def test_hash_is_sha256_hex() -> None:
    assert hash_api_key("abc") == hashlib.sha256(b"abc").hexdigest()


def test_valid_key_is_accepted() -> None:
    verifier = verifier_for(KEY, OTHER_KEY)
    assert verifier.verify(KEY)
    assert verifier.verify(OTHER_KEY)


@pytest.mark.parametrize("presented", ["sj_wrong", KEY + "x", KEY[:-1], KEY.upper(), " " + KEY])
def test_wrong_key_is_rejected(presented: str) -> None:
    assert not verifier_for(KEY).verify(presented)


@pytest.mark.parametrize("presented", [None, ""])
def test_empty_or_missing_key_is_rejected(presented: str | None) -> None:
    assert not verifier_for(KEY).verify(presented)


def test_the_hash_itself_is_not_a_key() -> None:
    assert not verifier_for(KEY).verify(hash_api_key(KEY))


def test_oversized_or_unencodable_keys_are_rejected() -> None:
    verifier = verifier_for(KEY)
    assert not verifier.verify("x" * 100_000)
    assert not verifier.verify("sj_\udcff")


@pytest.mark.parametrize("raw", ["", "  ", ",", " , ,"])
def test_no_hashes_configured_rejects_everything(raw: str) -> None:
    verifier = ApiKeyVerifier(parse_key_hashes(raw))
    for presented in (KEY, "", None, "anything"):
        assert not verifier.verify(presented)


def test_parse_tolerates_whitespace_case_and_trailing_commas() -> None:
    digest = hash_api_key(KEY)
    parsed = parse_key_hashes(f" {digest.upper()} ,\n{hash_api_key(OTHER_KEY)},")
    assert parsed == (bytes.fromhex(digest), bytes.fromhex(hash_api_key(OTHER_KEY)))


@pytest.mark.parametrize(
    "bad_entry",
    [
        "sj_this-is-a-raw-key-not-a-hash",
        "g" * 64,
        "a" * 63,
        "a" * 65,
        hashlib.sha1(b"k").hexdigest(),
        "0x" + "a" * 62,
        "aa " * 21 + "a",
    ],
)
def test_malformed_entry_is_rejected_without_echoing_it(bad_entry: str) -> None:
    raw = f"{hash_api_key(KEY)},{bad_entry}"
    with pytest.raises(ValueError) as caught:
        parse_key_hashes(raw)
    message = str(caught.value)
    assert "#2" in message
    assert bad_entry.strip() not in message
    assert bad_entry.strip()[:8] not in message


def test_verifier_rejects_non_digest_bytes() -> None:
    with pytest.raises(ValueError):
        ApiKeyVerifier([b"short"])


def test_verify_compares_against_every_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    keys = [KEY, OTHER_KEY, "sj_third", "sj_fourth"]
    verifier = verifier_for(*keys)
    real_compare = hmac.compare_digest
    calls: list[bool] = []

    def counting_compare(a: bytes, b: bytes) -> bool:
        result = real_compare(a, b)
        calls.append(result)
        return result

    monkeypatch.setattr(hmac, "compare_digest", counting_compare)

    assert verifier.verify(KEY)  # matches the first entry
    assert calls == [True, False, False, False]

    calls.clear()
    assert not verifier.verify("sj_nope")
    assert calls == [False] * len(keys)


def test_repr_does_not_reveal_digests() -> None:
    verifier = verifier_for(KEY)
    assert hash_api_key(KEY) not in repr(verifier)
    assert "1" in repr(verifier)


def test_generated_key_round_trips() -> None:
    key, digest = generate_api_key()
    assert key.startswith("sj_")
    assert len(key) >= 3 + 43  # 32 random bytes, URL-safe base64
    assert digest == hash_api_key(key)
    assert ApiKeyVerifier(parse_key_hashes(digest)).verify(key)


def test_generated_keys_are_unique() -> None:
    assert len({generate_api_key()[0] for _ in range(100)}) == 100


async def test_made_up_keys_cost_no_store_read_after_the_first() -> None:
    """A key's checksum refuses a made-up or mistyped one without a read; a well-formed key
    the store does not have is read once, then refused from memory (bounded)."""
    from datetime import UTC, datetime

    from scrapejobs_dispatcher.tenants.api_keys import generate_api_key, plausible_key
    from scrapejobs_dispatcher.tenants.keyring import Keyring
    from scrapejobs_shared.adapters.memory.api_keys import MemoryApiKeyStore
    from scrapejobs_shared.domain.tenancy import Role

    class Counting(MemoryApiKeyStore):
        reads = 0

        async def by_digest(self, digest: str):  # type: ignore[no-untyped-def]
            Counting.reads += 1
            return await super().by_digest(digest)

    keyring = Keyring(ApiKeyVerifier(()), lambda: datetime.now(UTC))
    keyring.use_store(Counting())
    made = await keyring.create("team-a", Role.MEMBER, "real")
    assert plausible_key(made.key) and (await keyring.known(made.key)) is not None
    reads = Counting.reads
    mistyped = made.key[:-1] + ("0" if made.key[-1] != "0" else "1")
    for junk in ("sj_nope", "hello", mistyped, "sj_" + "x" * 60):
        assert await keyring.known(junk) is None
    assert Counting.reads == reads  # no read for a key that cannot exist
    stranger, _ = generate_api_key()  # well-formed, never stored
    for _ in range(5):
        assert await keyring.known(stranger) is None
    assert Counting.reads == reads + 1
    legacy = "sj_" + "a" * 43  # a key made before keys had a checksum is still looked up
    assert plausible_key(legacy)


async def test_a_flood_of_made_up_keys_costs_a_bounded_number_of_reads() -> None:
    """The review: each distinct well-formed made-up key (its checksum is no secret) cost a
    key-store read. An instance reads at most FIRST_READS_BURST at once (then
    FIRST_READS_PER_S) of keys it never saw valid; past it they are a 503 without a read, and a
    key it saw valid goes on."""
    from datetime import UTC, datetime

    from scrapejobs_dispatcher.tenants.api_keys import generate_api_key
    from scrapejobs_dispatcher.tenants.keyring import (
        FIRST_READS_BURST,
        KeyLookupsBusy,
        Keyring,
    )
    from scrapejobs_shared.adapters.memory.api_keys import MemoryApiKeyStore
    from scrapejobs_shared.domain.tenancy import Role

    class Counting(MemoryApiKeyStore):
        reads = 0

        async def by_digest(self, digest: str):  # type: ignore[no-untyped-def]
            Counting.reads += 1
            return await super().by_digest(digest)

    keyring = Keyring(ApiKeyVerifier(()), lambda: datetime.now(UTC), recheck_s=0)
    keyring.use_store(Counting())
    made = await keyring.create("team-a", Role.MEMBER, "real")
    assert await keyring.known(made.key) is not None
    busy = 0
    for _ in range(1000):
        try:
            assert await keyring.known(generate_api_key()[0]) is None
        except KeyLookupsBusy:
            busy += 1
    assert Counting.reads <= FIRST_READS_BURST + 10  # (the bucket refills as the loop runs)
    assert busy >= 1000 - FIRST_READS_BURST - 10
    assert await keyring.known(made.key) is not None  # seen valid: read again, accepted
