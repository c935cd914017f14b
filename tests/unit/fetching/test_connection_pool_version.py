"""LinearConnectionPool carries one pass of httpcore's pool: an upgrade must re-check it."""

from __future__ import annotations

import httpcore

from scrapejobs_worker.fetching.connection_pool import ADAPTED_FROM


def test_httpcore_is_the_version_the_pool_pass_was_adapted_from() -> None:
    assert httpcore.__version__ == ADAPTED_FROM, (
        "httpcore changed: compare AsyncConnectionPool._assign_requests_to_connections with "
        "scrapejobs_worker/fetching/connection_pool.py, port any change, then update "
        "ADAPTED_FROM (or drop the override if upstream made the pass linear)"
    )
