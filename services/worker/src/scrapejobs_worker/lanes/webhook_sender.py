"""Delivering one webhook event: sign it per Standard Webhooks (or as Firecrawl does, for a
webhook of that shape) and POST it through the SSRF-safe fetcher. A page's event is made from
its stored task (a page not finished yet is left to the lane that finishes it, which announces
it again; a cancelled page is not announced). A 2xx acks; anything else is recorded and
nacked, so Pub/Sub retries with backoff, and every attempt carries the same ``webhook-id``
(receivers deduplicate on it). After
``max_attempts`` the event is recorded ``failed`` and acked; a destination the fetcher refuses
(blocked, malformed) fails at once.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from standardwebhooks.webhooks import Webhook

from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.records import JobRecord, TaskRecord
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.domain.webhook_events import MalformedEvent, WebhookEvent, page_data
from scrapejobs_shared.domain.webhook_spec import WebhookSpec
from scrapejobs_shared.firecrawl.webhook_bodies import SIGNATURE_HEADER, firecrawl_body, signature
from scrapejobs_shared.messaging.task_message import PushedMessage
from scrapejobs_shared.ports.fetcher import Fetcher, FetchError, FetchRequest, PermanentFetchError
from scrapejobs_shared.ports.job_store import JobReads
from scrapejobs_shared.ports.webhooks import DeliveryState, WebhookDelivery, WebhookLog
from scrapejobs_worker.delivery.verdict import Verdict

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class WebhookPolicy:
    timeout_s: float = 10.0
    max_attempts: int = 8  # then the event is recorded failed (Pub/Sub's own limit is higher)


@dataclass(eq=False)
class WebhookSender:
    store: JobReads
    deliveries: WebhookLog
    fetcher: Fetcher
    clock: Clock
    secrets: Sequence[str]
    policy: WebhookPolicy

    async def handle(self, pushed: PushedMessage) -> Verdict:
        try:
            event = WebhookEvent.from_message(pushed.data)
        except MalformedEvent as exc:
            log.error("malformed webhook event", extra={"why": str(exc)})
            await self.store.record_rejected_message(
                pushed.message_id, str(exc), pushed.data, self.clock()
            )
            return Verdict.done("malformed event recorded")
        job = await self.store.get_job(event.job_id)
        if job is None or job.spec.webhook is None:
            return Verdict.done("no webhook")
        previous = await self.deliveries.get(job.id, event.id)
        if previous is not None and previous.state != "pending":
            return Verdict.done(f"already {previous.state}")
        page = None
        if event.type == "task.finished":
            page = await self.store.get_task(job.id, str(event.data.get("task_id", "")))
            if page is None or page.status is TaskStatus.CANCELLED:
                return Verdict.done("no such page, or a cancelled one: nothing to announce")
            if not page.status.terminal:
                return Verdict.done("the page is not finished: its lane announces it")
        now = self.clock()
        status, error, permanent = await self._post(job, page, event, now)
        attempts = (previous.attempts if previous else 0) + 1
        state: DeliveryState = "pending"
        if status is not None and 200 <= status < 300:
            state = "delivered"
        elif permanent or attempts >= self.policy.max_attempts:
            state = "failed"
        delivery = WebhookDelivery(
            event_id=event.id,
            type=event.type,
            url=job.spec.webhook.url,
            state=state,
            attempts=attempts,
            created_at=previous.created_at if previous else now,
            updated_at=now,
            last_status=status,
            last_error=error,
            delivered_at=now if state == "delivered" else None,
        )
        await self.deliveries.put(job.id, delivery, job.expire_at)
        extra = {"job_id": job.id, "event": event.type, "attempts": attempts, "state": state}
        log.info("webhook attempt", extra=extra | {"status": status, "error": error})
        if state == "pending":
            return Verdict.retry(error or "webhook not delivered")
        return Verdict.done(state)

    async def _post(
        self, job: JobRecord, page: TaskRecord | None, event: WebhookEvent, now: datetime
    ) -> tuple[int | None, str | None, bool]:
        """(HTTP status, error, whether retrying is pointless)."""
        hook = job.spec.webhook
        assert hook is not None
        keys = [hook.secret] if hook.secret else list(self.secrets)
        if not keys:
            return None, "no signing key: the job has no secret and none is configured", True
        body, signed = _signed(hook, job, page, event, keys, now)
        headers = {**hook.headers, "content-type": "application/json", **signed}
        request = FetchRequest(hook.url, headers, self.policy.timeout_s, body=body.encode())
        try:
            response = await self.fetcher.fetch(request)
        except PermanentFetchError as exc:
            return None, f"{exc.reason}: {exc.detail}", True
        except FetchError as exc:
            return None, f"{exc.reason}: {exc.detail}", False
        error = None if 200 <= response.status < 300 else f"HTTP {response.status}"
        return response.status, error, False


def _signed(
    hook: WebhookSpec,
    job: JobRecord,
    page: TaskRecord | None,
    event: WebhookEvent,
    keys: Sequence[str],
    now: datetime,
) -> tuple[str, dict[str, str]]:
    """The body and its signature headers, in the webhook's shape. Firecrawl's carries one
    signature: the first key's (the deployment's current one when rotating)."""
    if hook.shape == "firecrawl":
        body = firecrawl_body(
            event, crawl=job.spec.crawl is not None, metadata=hook.metadata, page=page
        )
        return body, {SIGNATURE_HEADER: signature(keys[0], body)}
    body = event.body(page_data(page) if page is not None else None, hook.metadata)
    return body, {
        "webhook-id": event.id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": " ".join(Webhook(key).sign(event.id, now, body) for key in keys),
    }
