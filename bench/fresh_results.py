"""Each workload of a run on one stack, and each measured run of F and K, starts with no results
of the runs before it: they are deleted from the Firestore emulator in between
(:func:`forget_results`).

Why: a job's results are documents of one root collection, ``tasks``, found by a query on
their ``job_id`` (shared/src/scrapejobs_shared/adapters/firestore/task_documents.py).
Firestore answers that query from an index, at a cost of the job's own results. The emulator
has no indexes: it reads every document of the collection, so a listing of one job's results
slows with every result of every job before it. F's rounds left 40,000 there; with them a
monitor's check (K, which compares its results a hundred at a time) ran at 0.68 of a plain job,
1.83 with them deleted, and a search's scrapes (S) took 1.38 s over its job, 0.28 s
(bench/README.md, "The emulator's scans"). That is the emulator's cost, not the product's, so
no run pays for the ones before it. The jobs' own documents stay.
"""

from __future__ import annotations

import os
import time
from typing import Any

TASKS = "tasks"  # the root collection of results (task_documents.TASKS)


def forget_results(firestore_host: str, project_id: str) -> dict[str, Any]:
    """Delete every document of the root ``tasks`` collection of the emulator at
    ``firestore_host``: how many, and in how long."""
    from google.cloud import firestore
    from google.cloud.firestore_v1.bulk_writer import BulkWriterOptions

    saved = os.environ.get("FIRESTORE_EMULATOR_HOST")
    os.environ["FIRESTORE_EMULATOR_HOST"] = firestore_host  # read when the client is made
    try:
        client = firestore.Client(project=project_id)
    finally:
        if saved is None:
            del os.environ["FIRESTORE_EMULATOR_HOST"]
        else:
            os.environ["FIRESTORE_EMULATOR_HOST"] = saved
    started = time.perf_counter()
    try:
        # unthrottled: the writer's default 500 deletes a second is Firestore's ramp, not the
        # emulator's (10,000 deletes took 21 s at it, 2.8 s without)
        unthrottled = BulkWriterOptions(initial_ops_per_second=50_000, max_ops_per_second=50_000)
        writer = client.bulk_writer(unthrottled)
        deleted = client.recursive_delete(client.collection(TASKS), bulk_writer=writer)
    finally:
        client.close()
    return {"deleted": deleted, "s": round(time.perf_counter() - started, 2)}
