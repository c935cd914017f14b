"""Read a streamed response body under two caps, with bounded memory.

Decision on oversized bodies:

* More than ``max_body_bytes`` raw bytes on the wire: reading stops at the cap, the connection
  is dropped, and the response is returned with the body decoded so far and
  ``truncated=True``. For HTML a prefix of a huge page is still useful.
* More than ``max_decoded_bytes`` after Content-Encoding decoding: if the body is encoded and
  the decoded/raw ratio is at least ``max_compression_ratio``, it is a decompression bomb and a
  PermanentFetchError ``body_too_large`` (there is nothing worth keeping in it). Otherwise
  (plain bodies, or honest compression of a big page) the body is truncated at
  ``max_decoded_bytes`` with ``truncated=True``, exactly as for the raw cap.

Raw chunks are at most one network read (what aiohttp's buffer holds) and decoding proceeds in steps
of at most 64 KiB, so memory stays within about twice the decoded cap (the buffer and the final
``bytes`` copy) plus a few small buffers, however large the body on the wire.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from scrapejobs_shared.ports.fetcher import PermanentFetchError
from scrapejobs_worker.fetching.content_encoding import Decoder, decoder_for, parse_codings


@dataclass(frozen=True, slots=True)
class BodyLimits:
    max_body_bytes: int
    max_decoded_bytes: int
    max_compression_ratio: float


@dataclass(frozen=True, slots=True)
class Body:
    data: bytes
    truncated: bool


class _CappedBody:
    """Accumulates decoded output and enforces both caps."""

    def __init__(self, limits: BodyLimits, decoder: Decoder, encoded: bool) -> None:
        self._limits = limits
        self._decoder = decoder
        self._encoded = encoded
        self._buffer = bytearray()
        self._raw_bytes = 0
        self.truncated = False

    def feed_raw(self, chunk: bytes) -> bool:
        """Consume one raw chunk; return False once reading must stop."""
        room = self._limits.max_body_bytes - self._raw_bytes
        if len(chunk) > room:
            chunk = chunk[:room]
            self.truncated = True
        self._raw_bytes += len(chunk)
        for piece in self._decoder.feed(chunk):
            if not self._append_decoded(piece):
                return False
        return not self.truncated

    def _append_decoded(self, piece: bytes) -> bool:
        room = self._limits.max_decoded_bytes - len(self._buffer)
        if len(piece) <= room:
            self._buffer += piece
            return True
        self._refuse_if_bomb(len(self._buffer) + len(piece))
        self._buffer += piece[:room]
        self.truncated = True
        return False

    def _refuse_if_bomb(self, decoded_bytes: int) -> None:
        ratio = decoded_bytes / max(self._raw_bytes, 1)
        if self._encoded and ratio >= self._limits.max_compression_ratio:
            raise PermanentFetchError(
                f"decompressed body exceeds {self._limits.max_decoded_bytes} bytes "
                f"at a {ratio:.0f}:1 ratio (decompression bomb)",
                reason="body_too_large",
            )

    def result(self) -> Body:
        return Body(data=bytes(self._buffer), truncated=self.truncated)


async def read_capped_body(
    raw_chunks: AsyncIterator[bytes], content_encoding: str, limits: BodyLimits
) -> Body:
    """Stream a raw body through the decoder of ``content_encoding``, stopping at the caps."""
    decoder = decoder_for(content_encoding)
    body = _CappedBody(limits, decoder, encoded=bool(parse_codings(content_encoding)))
    async for chunk in raw_chunks:
        if not body.feed_raw(chunk):
            break
    return body.result()
