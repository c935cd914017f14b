"""Announcing a job's end to its webhook: called by whoever moved the job to its end state
(the status write is guarded, so exactly one caller per completion or cancel gets here, even
when the last two tasks finish at the same moment on two instances)."""

from __future__ import annotations

import logging

from scrapejobs_shared.domain.webhook_events import job_ended
from scrapejobs_shared.ports.job_store import JobStore
from scrapejobs_shared.ports.webhooks import WebhookOutbox

log = logging.getLogger(__name__)


class JobEvents:
    def __init__(self, store: JobStore, outbox: WebhookOutbox) -> None:
        self._store = store
        self._outbox = outbox

    async def ended(self, job_id: str) -> None:
        """Queue the job's end event when its webhook wants it. Never raises: the job's end
        stands whether or not its announcement could be queued (a failure is logged)."""
        try:
            job = await self._store.get_job(job_id)
            webhook = job.spec.webhook if job is not None else None
            if job is None or webhook is None:
                return
            event = job_ended(job, await self._store.count_tasks(job_id))
            if event.type in webhook.events:
                await self._outbox.publish(event)
                log.info("webhook event queued", extra={"job_id": job_id, "event": event.type})
        except Exception:
            log.exception("webhook event not queued", extra={"job_id": job_id})
