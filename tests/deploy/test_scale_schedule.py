"""``make scale`` runs the maintenance Terraform schedules (Cloud Scheduler's calls of the
dispatcher), every one of them at its interval: a simulated deployment without them would
leave stuck what the real one recovers."""

from __future__ import annotations

import re
from typing import Any

from scrapejobs_scale.simulation import MAINTENANCE_EVERY_S

EVERY_N_MINUTES = re.compile(r"^(\*|\*/(\d+)) \* \* \* \*$")


def test_the_simulation_calls_every_maintenance_job_at_terraforms_interval(tf: Any, h: Any) -> None:
    scheduled: dict[str, float] = {}
    for job in h.as_map(tf.locals["maintenance_jobs"]).values():
        job = h.as_map(job)
        minutes = EVERY_N_MINUTES.match(job["schedule"])
        if minutes is None:
            continue  # daily or rarer: longer than any workload
        scheduled[job["path"]] = 60.0 * int(minutes.group(2) or 1)
    assert len(scheduled) >= 3
    assert scheduled == MAINTENANCE_EVERY_S
