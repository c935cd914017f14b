"""Announcing a job's end to its webhook: called by whoever moved the job to its end state
(the status write is guarded, so exactly one caller per completion or cancel gets here, even
when the last two tasks finish at the same moment on two instances)."""

from __future__ import annotations

import logging

from scrapejobs_shared.domain.records import JobRecord
from scrapejobs_shared.domain.webhook_events import job_ended
from scrapejobs_shared.ports.job_store import JobStore
from scrapejobs_shared.ports.webhooks import WebhookLog, WebhookOutbox

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

    async def announce_if_lost(self, job: JobRecord, deliveries: WebhookLog) -> bool:
        """Queue a finished job's event again when no delivery of it was ever attempted (the
        instance that ended the job died before queueing it). A duplicate of an event still in
        flight is harmless: it has the same webhook-id, and a delivered event is never sent
        again."""
        webhook = job.spec.webhook
        if webhook is None or job.finished_at is None:
            return False
        event = job_ended(job, await self._store.count_tasks(job.id))
        if event.type not in webhook.events or await deliveries.get(job.id, event.id):
            return False
        await self._outbox.publish(event)
        log.warning("webhook event queued again", extra={"job_id": job.id, "event": event.type})
        return True
