"""What one refresh of an open dashboard tab costs in Firestore reads, on the real stack: every
fragment a tab polls every 5 seconds reads at most 10 documents itself (the figures are kept a
few seconds per instance and computed again behind the poll, figure_cache.py); the dispatcher
says how many in ``X-Firestore-Reads``."""

from __future__ import annotations

import pytest

from support.jobs import PRODUCT_FIELDS, submit, wait_finished

pytestmark = [pytest.mark.emulators, pytest.mark.stack]

POLLED = ["/ui/fragments/overview", "/ui/fragments/history", "/ui/fragments/hosts"]
POLLED += ["/ui/fragments/workers", "/ui/fragments/dead-letters"]


async def test_one_refresh_of_every_polled_fragment_reads_at_most_10_documents(api, site) -> None:
    job = await submit(api, {"urls": [f"{site.url}/product/77"], "extract": PRODUCT_FIELDS})
    await wait_finished(api, job["id"])
    polled = [*POLLED, f"/ui/fragments/jobs/{job['id']}"]
    first = {path: await api.get(path) for path in ["/ui", *polled]}  # a tab opened
    assert all(r.status_code == 200 for r in first.values())
    opening = sum(int(r.headers["x-firestore-reads"]) for r in first.values())
    for path in polled:  # the tab's next poll
        response = await api.get(path, headers={"HX-Request": "true"})
        assert response.status_code == 200, path
        reads = int(response.headers["x-firestore-reads"])
        assert reads <= 10, (path, reads)
    print(f"opening the tab read {opening} documents")  # noqa: T201
