"""Priority lanes on the real stack: each lane has its own topic and push subscription (and so
its own push slots on the emulator), so a high-priority job overtakes a low-priority backlog;
a job's documents travel in the documents lane."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from support.jobs import PRODUCT_FIELDS, submit, wait_finished
from support.site import Site

pytestmark = [pytest.mark.emulators, pytest.mark.stack]


async def test_a_high_job_completes_while_a_low_backlog_is_still_queued(api, site) -> None:
    backlog = await submit(
        api,
        {
            "urls": [f"{site.url}/slow/lane-{n}?s=1&times=1" for n in range(3000)],
            "priority": "low",
        },
    )
    other_host = Site().start()  # per-host politeness holds across lanes: another host
    try:
        while (await api.get(f"/v1/jobs/{backlog['id']}")).json()["counts"]["running"] == 0:
            await asyncio.sleep(0.2)  # the backlog holds the low lane's push slots
        started = time.monotonic()
        urgent = await submit(
            api,
            {
                "urls": [f"{other_host.url}/product/{n}" for n in range(5)],
                "extract": PRODUCT_FIELDS,
                "priority": "high",
            },
        )
        done = await wait_finished(api, urgent["id"], timeout_s=60)
        waited_s = time.monotonic() - started
        behind = (await api.get(f"/v1/jobs/{backlog['id']}")).json()
    finally:
        other_host.stop()
        await api.post(f"/v1/jobs/{backlog['id']}:cancel")

    assert done["counts"]["succeeded"] == 5 and done["priority"] == "high"
    assert behind["priority"] == "low"
    finished = behind["total"] - behind["counts"]["queued"] - behind["counts"]["running"]
    assert finished < 300, f"the backlog was mostly done ({finished}) after {waited_s:.1f} s"
    cancelled = await wait_finished(api, backlog["id"], timeout_s=120)
    assert cancelled["status"] == "cancelled" and cancelled["counts"]["cancelled"] > 2000


async def test_a_job_s_documents_are_delivered_in_the_documents_lane(api, site, stack) -> None:
    pdf, page = f"{site.url}/files/pdflatex-4-pages.pdf", f"{site.url}/product/1"
    job = await submit(api, {"urls": [pdf, page], "priority": "high"})
    done = await wait_finished(api, job["id"], timeout_s=60)
    assert done["counts"]["succeeded"] == 2 and done["priority"] == "high"
    delivered = {  # the subscriptions that pushed its batches
        json.loads(line)["subscription"]
        for line in stack.worker.log_path.read_text().splitlines()
        if '"batch processed"' in line and job["id"] in line
    }
    subscription = stack.config.topology.task_subscription
    assert delivered == {f"{subscription}-documents", f"{subscription}-high"}


async def test_priority_is_validated_and_shown(api, site) -> None:
    bad = await api.post("/v1/jobs", json={"url": f"{site.url}/product/1", "priority": "urgent"})
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "priority"
