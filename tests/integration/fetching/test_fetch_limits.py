"""Body caps, decompression bombs and deadlines, against real loopback servers."""

from __future__ import annotations

import asyncio
import os
import tracemalloc
import zlib

import pytest

from scrapejobs_shared.ports.fetcher import FetchRequest, PermanentFetchError, TransientFetchError
from scrapejobs_worker.fetching import FetchPolicy

MiB = 1024 * 1024
LOOPBACK = ("127.0.0.0/8",)


def _gzip_of_zeros(total: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = bytes(MiB)
    parts = [compressor.compress(block) for _ in range(total // MiB)]
    return b"".join([*parts, compressor.flush()])


def _streaming_handler(server, total: int, chunk: bytes, headers: dict[str, str]):
    async def handler(_request, writer):
        writer.write(server.response_head(200, {"Content-Length": str(total), **headers}))
        sent = 0
        while sent < total:
            piece = chunk[: total - sent]
            writer.write(piece)
            await writer.drain()
            sent += len(piece)
            server.bytes_sent = sent

    return handler


async def _fetch_traced(fetcher, url: str):
    tracemalloc.start()
    try:
        outcome = await fetcher.fetch(FetchRequest(url, timeout_s=10))
    except Exception as exc:  # returned so the peak is measured in both cases
        outcome = exc
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return outcome, peak


async def test_huge_body_is_truncated_at_the_cap_with_bounded_memory(http_server, fetcher_factory):
    total = 50_000_000
    http_server.routes["/huge"] = _streaming_handler(
        http_server, total, b"a" * (64 * 1024), {"Content-Type": "text/html"}
    )
    policy = FetchPolicy(allowlist=LOOPBACK, max_body_bytes=MiB, max_decoded_bytes=2 * MiB)
    fetcher = fetcher_factory(policy)

    response, peak = await _fetch_traced(fetcher, http_server.url("/huge"))

    assert response.status == 200
    assert response.truncated
    assert response.body == b"a" * MiB
    assert peak < 4 * MiB
    await asyncio.wait_for(http_server.cut.wait(), timeout=5)
    assert http_server.bytes_sent < total


async def test_gzip_bomb_is_refused_with_bounded_memory(http_server, fetcher_factory):
    bomb = _gzip_of_zeros(10 * MiB)
    assert len(bomb) < 64 * 1024
    http_server.routes["/bomb"] = _streaming_handler(
        http_server, len(bomb), bomb, {"Content-Encoding": "gzip"}
    )
    policy = FetchPolicy(allowlist=LOOPBACK, max_body_bytes=MiB, max_decoded_bytes=MiB)
    fetcher = fetcher_factory(policy)

    error, peak = await _fetch_traced(fetcher, http_server.url("/bomb"))

    assert isinstance(error, PermanentFetchError)
    assert error.reason == "body_too_large"
    assert peak < 4 * MiB


async def test_gzip_bomb_is_refused_under_the_production_caps(http_server, fetcher_factory):
    bomb = _gzip_of_zeros(100 * MiB)
    http_server.routes["/bomb"] = _streaming_handler(
        http_server, len(bomb), bomb, {"Content-Encoding": "gzip"}
    )
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK))

    error, peak = await _fetch_traced(fetcher, http_server.url("/bomb"))

    assert isinstance(error, PermanentFetchError)
    assert error.reason == "body_too_large"
    assert peak < 3 * FetchPolicy().max_decoded_bytes


async def test_honestly_compressed_big_page_is_truncated_not_refused(http_server, fetcher_factory):
    page = os.urandom(3 * MiB // 2).hex().encode()  # compresses about 2:1
    compressed = zlib.compress(page, 6, wbits=zlib.MAX_WBITS | 16)
    http_server.routes["/big"] = _streaming_handler(
        http_server, len(compressed), compressed, {"Content-Encoding": "gzip"}
    )
    policy = FetchPolicy(allowlist=LOOPBACK, max_body_bytes=4 * MiB, max_decoded_bytes=MiB)
    fetcher = fetcher_factory(policy)

    response = await fetcher.fetch(FetchRequest(http_server.url("/big"), timeout_s=10))

    assert response.truncated
    assert response.body == page[:MiB]


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        ("gzip", lambda data: zlib.compress(data, wbits=zlib.MAX_WBITS | 16)),
        ("x-gzip", lambda data: zlib.compress(data, wbits=zlib.MAX_WBITS | 16)),
        ("deflate", lambda data: zlib.compress(data)),
        ("deflate", lambda data: zlib.compress(data, wbits=-zlib.MAX_WBITS)),
        ("identity", lambda data: data),
        ("gzip, deflate", lambda data: zlib.compress(zlib.compress(data, wbits=31))),
    ],
)
async def test_encoded_bodies_are_decoded(encoding, encode, http_server, fetcher_factory):
    page = b"<html>" + b"hello world " * 5000 + b"</html>"

    async def handler(_request, writer):
        await http_server.send_response(writer, 200, encode(page), {"Content-Encoding": encoding})

    http_server.routes["/page"] = handler
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK))

    response = await fetcher.fetch(FetchRequest(http_server.url("/page"), timeout_s=5))

    assert response.body == page
    assert not response.truncated
    assert response.headers["content-encoding"] == encoding


async def test_unsupported_encoding_is_refused(http_server, fetcher_factory):
    async def handler(_request, writer):
        await http_server.send_response(writer, 200, b"\x1b\x00garbage", {"Content-Encoding": "br"})

    http_server.routes["/br"] = handler
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK))

    with pytest.raises(PermanentFetchError) as caught:
        await fetcher.fetch(FetchRequest(http_server.url("/br"), timeout_s=5))
    assert caught.value.reason == "unsupported_content_encoding"


async def test_dripping_server_is_cut_at_the_overall_deadline(http_server, fetcher_factory):
    async def drip(_request, writer):
        writer.write(http_server.response_head(200, {"Content-Length": "1000"}))
        for _ in range(1000):
            writer.write(b"x")
            await writer.drain()
            await asyncio.sleep(0.5)

    http_server.routes["/drip"] = drip
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK))

    with pytest.raises(TransientFetchError) as caught:
        await fetcher.fetch(FetchRequest(http_server.url("/drip"), timeout_s=1.5))
    assert caught.value.reason == "timeout"
    await asyncio.wait_for(http_server.cut.wait(), timeout=5)


async def test_deadline_covers_the_whole_redirect_chain(http_server, fetcher_factory):
    async def slow_redirect(request, writer):
        await asyncio.sleep(0.3)
        hop = int(request.path.rsplit("/", 1)[1])
        await http_server.send_response(writer, 302, headers={"Location": f"/slow/{hop + 1}"})

    for hop in range(5):
        http_server.routes[f"/slow/{hop}"] = slow_redirect
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK))

    with pytest.raises(TransientFetchError) as caught:
        await fetcher.fetch(FetchRequest(http_server.url("/slow/0"), timeout_s=0.8))
    assert caught.value.reason == "timeout"


async def test_read_timeout_is_transient(http_server, fetcher_factory):
    async def stall(_request, writer):
        await asyncio.sleep(30)

    http_server.routes["/stall"] = stall
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK, read_timeout_s=0.3))

    with pytest.raises(TransientFetchError) as caught:
        await fetcher.fetch(FetchRequest(http_server.url("/stall"), timeout_s=10))
    assert caught.value.reason == "timeout"


async def test_request_timeout_is_clamped_and_validated(http_server, fetcher_factory):
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK))
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(PermanentFetchError) as caught:
            await fetcher.fetch(FetchRequest(http_server.url("/"), timeout_s=bad))
        assert caught.value.reason == "invalid_request"
