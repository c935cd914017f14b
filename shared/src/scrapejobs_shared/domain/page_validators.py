"""What a monitor keeps of a page to learn cheaply whether it changed: the response's own
validators (``ETag``, ``Last-Modified``), sent back as ``If-None-Match`` and
``If-Modified-Since`` so the site may answer ``304 Not Modified``, and the digest of the body
as fetched, so a site that ignores them costs a fetch but neither parsing nor diffing.

A page of a check's job that carries validators and is answered 304, or with the same body,
ends ``unchanged``: counted as succeeded, no result of its own (the check lists it ``same``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MAX_VALIDATOR = 512  # characters of an ETag or a Last-Modified kept (longer ones are not)


@dataclass(frozen=True, slots=True)
class PageValidators:
    etag: str | None = None
    last_modified: str | None = None
    digest: str | None = None  # body_digest of the body as fetched

    @classmethod
    def of_response(cls, headers: Mapping[str, str], body: bytes) -> PageValidators:
        """A response's validators (``headers`` by lower-cased name)."""
        return cls(
            _kept(headers.get("etag")), _kept(headers.get("last-modified")), body_digest(body)
        )

    def request_headers(self) -> dict[str, str]:
        """The conditional request's headers."""
        headers = {}
        if self.etag is not None:
            headers["If-None-Match"] = self.etag
        if self.last_modified is not None:
            headers["If-Modified-Since"] = self.last_modified
        return headers

    def unchanged(self, status: int, body: bytes) -> bool:
        """Whether a response to the conditional request says the page did not change."""
        if status == 304:
            return self.etag is not None or self.last_modified is not None
        return 200 <= status < 300 and self.digest is not None and body_digest(body) == self.digest

    def to_doc(self) -> dict[str, str]:
        pairs = (("t", self.etag), ("m", self.last_modified), ("h", self.digest))
        return {key: value for key, value in pairs if value is not None}

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any] | None) -> PageValidators | None:
        if not doc:
            return None
        return cls(doc.get("t"), doc.get("m"), doc.get("h"))


def body_digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def _kept(value: str | None) -> str | None:
    if value is None or not value.strip() or len(value) > MAX_VALIDATOR:
        return None
    return value.strip()
