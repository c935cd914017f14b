"""Streaming decoders produce bounded steps and handle gzip/deflate variants."""

from __future__ import annotations

import zlib

import pytest

from scrapejobs_shared.ports.fetcher import PermanentFetchError
from scrapejobs_worker.fetching.content_encoding import STEP_BYTES, decoder_for

PAGE = b"<html>" + b"lorem ipsum dolor sit amet " * 4000 + b"</html>"


def _decode_in_chunks(encoding: str, data: bytes, chunk: int = 1000) -> bytes:
    decoder = decoder_for(encoding)
    out = bytearray()
    for start in range(0, len(data), chunk):
        for piece in decoder.feed(data[start : start + chunk]):
            assert len(piece) <= STEP_BYTES
            out += piece
    return bytes(out)


@pytest.mark.parametrize(
    ("encoding", "data"),
    [
        ("", PAGE),
        ("identity", PAGE),
        ("gzip", zlib.compress(PAGE, wbits=31)),
        ("GZIP", zlib.compress(PAGE, wbits=31)),
        ("gzip", zlib.compress(PAGE[:5000], wbits=31) + zlib.compress(PAGE[5000:], wbits=31)),
        ("deflate", zlib.compress(PAGE)),
        ("deflate", zlib.compress(PAGE, wbits=-15)),
        ("deflate, gzip", zlib.compress(zlib.compress(PAGE), wbits=31)),
    ],
)
def test_roundtrip(encoding, data):
    assert _decode_in_chunks(encoding, data) == PAGE
    assert _decode_in_chunks(encoding, data, chunk=1) == PAGE


def test_a_bomb_is_inflated_in_bounded_steps_and_can_be_abandoned():
    bomb = zlib.compress(bytes(50 * 1024 * 1024), 9, wbits=31)
    decoder = decoder_for("gzip")
    produced = 0
    for piece in decoder.feed(bomb):
        assert len(piece) <= STEP_BYTES
        produced += len(piece)
        if produced > 1024 * 1024:
            break
    assert produced <= 1024 * 1024 + STEP_BYTES


@pytest.mark.parametrize("encoding", ["br", "zstd", "compress", "gzip, gzip, gzip"])
def test_unsupported_codings_are_refused(encoding):
    with pytest.raises(PermanentFetchError) as caught:
        decoder_for(encoding)
    assert caught.value.reason == "unsupported_content_encoding"


def test_corrupt_gzip_is_a_decoding_error():
    with pytest.raises(PermanentFetchError) as caught:
        _decode_in_chunks("gzip", b"definitely not gzip data")
    assert caught.value.reason == "decoding_error"


@pytest.mark.parametrize(
    ("encoding", "data"),
    [
        ("gzip", zlib.compress(PAGE, wbits=31) + b"\x00\x00trailing junk"),
        ("deflate", zlib.compress(PAGE) + b"trailing junk"),
    ],
)
def test_trailing_junk_after_the_stream_is_ignored(encoding, data):
    assert _decode_in_chunks(encoding, data) == PAGE
    assert _decode_in_chunks(encoding, data, chunk=7) == PAGE
