"""Paths of the API's resources."""

from __future__ import annotations

from urllib.parse import quote


def segment(value: str) -> str:
    """A path segment: an id with a '/' or '?' must not address another route."""
    return quote(value, safe="")
