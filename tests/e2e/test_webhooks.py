"""Signed completion webhooks on the real stack: a local receiver verifies every delivery with
the standardwebhooks library, sees exactly one job.completed per job although its batches
finish together, and gets the retry of a delivery it answered 500 with the same webhook-id."""

from __future__ import annotations

import asyncio
import base64
import os
import time
from collections.abc import Iterator

import pytest

from scrapejobs_devstack.stack import DEV_WEBHOOK_SECRET
from support.jobs import submit, wait_finished
from support.webhook_receiver import WebhookReceiver

pytestmark = [pytest.mark.emulators, pytest.mark.stack]
SECRET = "whsec_" + base64.b64encode(os.urandom(32)).decode()


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    receiver = WebhookReceiver(SECRET).start()
    yield receiver
    receiver.stop()


async def test_one_signed_job_completed_per_job_retried_with_the_same_id(
    api, site, receiver
) -> None:
    receiver.fail_first["/done"] = 1
    urls = [f"{site.url}/product/{n}" for n in range(250)]  # three batches finishing together
    job = await submit(
        api,
        {
            "urls": urls,
            "webhook": {
                "url": f"{receiver.url}/done",
                "secret": SECRET,
                "headers": {"X-Team": "t"},
            },
        },
    )
    await wait_finished(api, job["id"])

    first, retry = await receiver.once_received("/done", 2)
    assert first.answered == 500 and retry.answered == 204
    assert first.webhook_id == retry.webhook_id  # the same event, retried
    assert retry.payload is not None and retry.payload["type"] == "job.completed"
    assert retry.payload["data"]["job_id"] == job["id"]
    assert retry.payload["data"]["counts"]["succeeded"] == 250
    deliveries = (await api.get(f"/v1/jobs/{job['id']}/webhooks")).json()["deliveries"]
    assert [(d["type"], d["state"], d["attempts"]) for d in deliveries] == [
        ("job.completed", "delivered", 2)
    ]


async def test_failed_and_cancelled_jobs_are_announced(api, site, receiver) -> None:
    hook = {"url": f"{receiver.url}/failed", "secret": SECRET}
    failing = await submit(
        api, {"urls": [f"{site.url}/status/404/hook-{n}" for n in range(3)], "webhook": hook}
    )
    await wait_finished(api, failing["id"])
    [failed] = await receiver.once_received("/failed", 1)
    assert failed.payload is not None and failed.payload["type"] == "job.failed"

    hook = {"url": f"{receiver.url}/cancelled", "secret": SECRET, "events": ["job.cancelled"]}
    slow = await submit(
        api, {"urls": [f"{site.url}/slow/hook-{n}?s=2" for n in range(20)], "webhook": hook}
    )
    assert (await api.post(f"/v1/jobs/{slow['id']}:cancel")).status_code == 200
    [cancelled] = await receiver.once_received("/cancelled", 1)
    assert cancelled.payload is not None and cancelled.payload["type"] == "job.cancelled"
    await wait_finished(api, slow["id"])
    assert receiver.for_path("/cancelled") == [cancelled]  # no job.completed: not asked for


async def test_without_a_secret_the_deployment_key_signs(api, site) -> None:
    receiver = WebhookReceiver(DEV_WEBHOOK_SECRET).start()
    try:
        job = await submit(
            api,
            {"url": f"{site.url}/product/3", "webhook": {"url": f"{receiver.url}/plain"}},
        )
        await wait_finished(api, job["id"])
        [delivery] = await receiver.once_received("/plain", 1)
    finally:
        receiver.stop()
    assert delivery.payload is not None and delivery.answered == 204


async def test_a_webhook_to_the_metadata_server_is_refused_and_recorded(api, site) -> None:
    job = await submit(
        api,
        {
            "url": f"{site.url}/product/4",
            "webhook": {"url": "http://169.254.169.254/computeMetadata/v1/", "secret": SECRET},
        },
    )
    await wait_finished(api, job["id"])
    deadline = time.monotonic() + 30
    while True:
        deliveries = (await api.get(f"/v1/jobs/{job['id']}/webhooks")).json()["deliveries"]
        if deliveries and deliveries[0]["state"] != "pending":
            break
        assert time.monotonic() < deadline, deliveries
        await asyncio.sleep(0.3)
    assert deliveries[0]["state"] == "failed"
    assert deliveries[0]["last_error"].startswith("blocked_destination")
