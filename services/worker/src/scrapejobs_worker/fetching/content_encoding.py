"""Streaming Content-Encoding decoders with bounded output per step.

httpx's own decoders inflate each network chunk in one go, so a 64 KiB chunk of a gzip bomb
can become tens of megabytes at once. These decoders never produce more than ``STEP_BYTES``
per step (zlib's ``max_length`` / ``unconsumed_tail``), so the caller can stop as soon as its
cap is reached and memory stays bounded. Only gzip and deflate are supported (that is all the
client advertises); an unknown coding is a PermanentFetchError ``unsupported_content_encoding``
and corrupt data is a PermanentFetchError ``decoding_error``.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Protocol

from scrapejobs_shared.ports.fetcher import PermanentFetchError

STEP_BYTES = 64 * 1024
_MAX_LAYERS = 2
_GZIP_OR_ZLIB_WBITS = zlib.MAX_WBITS | 32  # auto-detect a gzip or zlib header
_ZLIB_WBITS = zlib.MAX_WBITS
_RAW_DEFLATE_WBITS = -zlib.MAX_WBITS
_GZIP_MAGIC = b"\x1f\x8b"


class Decoder(Protocol):
    def feed(self, data: bytes) -> Iterator[bytes]:
        """Decoded output for ``data``, in pieces of at most STEP_BYTES."""
        ...


class IdentityDecoder:
    def feed(self, data: bytes) -> Iterator[bytes]:
        for start in range(0, len(data), STEP_BYTES):
            yield data[start : start + STEP_BYTES]


class ZlibDecoder:
    """One zlib-family stream; with the gzip/zlib auto-detecting wbits, multi-member gzip too.

    Anything after the end of the stream that is not another gzip member is ignored.
    """

    def __init__(self, wbits: int) -> None:
        self._wbits = wbits
        self._obj = zlib.decompressobj(wbits)
        self._finished = False
        self._member_head: bytes | None = None  # set between gzip members

    def feed(self, data: bytes) -> Iterator[bytes]:
        pending = self._start_member(data) if self._member_head is not None else data
        more = bool(pending)
        while (pending or more) and not self._finished and self._member_head is None:
            out, pending = self._step(pending)
            if out:
                yield out
            # A full step may leave output buffered inside zlib even with no input left.
            more = len(out) == STEP_BYTES

    def _step(self, data: bytes) -> tuple[bytes, bytes]:
        """Decode at most STEP_BYTES; return (output, input still to be decoded)."""
        try:
            out = self._obj.decompress(data, STEP_BYTES)
        except zlib.error as exc:
            raise PermanentFetchError(f"corrupt body: {exc}", reason="decoding_error") from exc
        if self._obj.eof:
            return out, self._end_of_stream()
        return out, self._obj.unconsumed_tail

    def _end_of_stream(self) -> bytes:
        """A gzip stream may be followed by another member; a zlib/deflate stream may not."""
        if self._wbits != _GZIP_OR_ZLIB_WBITS:
            self._finished = True
            return b""
        rest = self._obj.unused_data
        self._obj = zlib.decompressobj(self._wbits)
        self._member_head = b""
        return self._start_member(rest)

    def _start_member(self, data: bytes) -> bytes:
        """Input of the next gzip member once its magic is seen; junk ends the body."""
        head = (self._member_head or b"") + data
        if len(head) < len(_GZIP_MAGIC):
            self._member_head = head
            return b""
        self._member_head = None
        self._finished = not head.startswith(_GZIP_MAGIC)
        return b"" if self._finished else head


class DeflateDecoder:
    """``deflate`` should be zlib-wrapped, but some servers send raw deflate: sniff the header."""

    def __init__(self) -> None:
        self._head = b""
        self._inner: ZlibDecoder | None = None

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self._inner is None:
            self._head += data
            if len(self._head) < 2:
                return
            data, self._head = self._head, b""
            wbits = _ZLIB_WBITS if _is_zlib_header(data[:2]) else _RAW_DEFLATE_WBITS
            self._inner = ZlibDecoder(wbits)
        yield from self._inner.feed(data)


def _is_zlib_header(head: bytes) -> bool:
    cmf, flg = head[0], head[1]
    return cmf & 0x0F == zlib.DEFLATED and (cmf << 8 | flg) % 31 == 0


class ChainDecoder:
    """Several codings, outermost first (Content-Encoding lists them innermost first)."""

    def __init__(self, decoders: list[Decoder]) -> None:
        self._decoders = decoders

    def feed(self, data: bytes) -> Iterator[bytes]:
        return self._feed_from(0, data)

    def _feed_from(self, index: int, data: bytes) -> Iterator[bytes]:
        if index == len(self._decoders):
            yield data
            return
        for piece in self._decoders[index].feed(data):
            yield from self._feed_from(index + 1, piece)


def parse_codings(content_encoding: str) -> list[str]:
    codings = [c.strip().lower() for c in content_encoding.split(",")]
    return [c for c in codings if c and c != "identity"]


def decoder_for(content_encoding: str) -> Decoder:
    """A decoder for a Content-Encoding header value (empty means identity)."""
    codings = parse_codings(content_encoding)
    if not codings:
        return IdentityDecoder()
    if len(codings) > _MAX_LAYERS:
        raise PermanentFetchError(
            f"too many content codings: {content_encoding!r}",
            reason="unsupported_content_encoding",
        )
    return ChainDecoder([_single_decoder(c) for c in reversed(codings)])


def _single_decoder(coding: str) -> Decoder:
    if coding in ("gzip", "x-gzip"):
        return ZlibDecoder(_GZIP_OR_ZLIB_WBITS)
    if coding == "deflate":
        return DeflateDecoder()
    raise PermanentFetchError(
        f"unsupported content coding {coding!r}", reason="unsupported_content_encoding"
    )
