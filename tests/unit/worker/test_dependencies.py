"""Dependencies the worker needs for reasons its code does not show."""

from __future__ import annotations

import importlib.util


def test_sniffio_is_installed_so_httpcore_does_not_retry_an_import_per_request() -> None:
    # httpcore imports sniffio inside every request and falls back to asyncio when it is
    # missing; the failed import is not cached, so each fetch would scan the import path.
    assert importlib.util.find_spec("sniffio") is not None
