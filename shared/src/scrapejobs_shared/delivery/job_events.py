"""Announcing a job's start, its pages' ends and its end to its webhook.

A job's end is announced by whoever moved the job to its end state (the status write is
guarded, so exactly one caller per completion or cancel gets here, even when the last two tasks
finish at the same moment on two instances). Its pages are announced by the lane that finished
them, after their results are stored and before the delivery that carried them is acked: a
delivery redone announces them again, under the same event ids."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import datetime

from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import JobRecord
from scrapejobs_shared.domain.webhook_events import job_ended, job_started, task_finished
from scrapejobs_shared.ports.jobs import Jobs
from scrapejobs_shared.ports.webhooks import WebhookLog, WebhookOutbox

log = logging.getLogger(__name__)


class JobEvents:
    def __init__(self, store: Jobs, outbox: WebhookOutbox) -> None:
        self._store = store
        self._outbox = outbox

    async def started(self, job: JobRecord) -> None:
        """Queue a just submitted job's start event when its webhook wants it. Never raises
        (the job stands; a failure is logged)."""
        webhook = job.spec.webhook
        if webhook is None or not webhook.wants("job.started"):
            return
        try:
            await self._outbox.publish(job_started(job))
        except Exception:
            log.exception("webhook event not queued", extra={"job_id": job.id})

    async def pages_finished(
        self, job_id: str, spec: JobSpec, pages: Sequence[tuple[str, str]], at: datetime
    ) -> bool:
        """Queue one event for each finished page (task id, URL) when the job's webhook wants
        them. False when one could not be queued: the caller has its delivery retried."""
        if not pages or spec.webhook is None or not spec.webhook.wants("task.finished"):
            return True
        outcomes = await asyncio.gather(
            *(self._outbox.publish(task_finished(job_id, task, url, at)) for task, url in pages),
            return_exceptions=True,
        )
        lost = sum(isinstance(outcome, BaseException) for outcome in outcomes)
        if lost:
            log.warning("page events not queued", extra={"job_id": job_id, "lost": lost})
        return not lost

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
