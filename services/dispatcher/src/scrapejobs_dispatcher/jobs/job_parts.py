"""What the job service and the recovery both work with: the store, the enqueuer that
publishes batches (and carries the clock, the tracer and the jobs' events), the rules a
submission passes, the webhook log and the held batches."""

from __future__ import annotations

from dataclasses import dataclass, field

from scrapejobs_dispatcher.rules.rules import SubmissionRules
from scrapejobs_shared.delivery.enqueue import Enqueuer
from scrapejobs_shared.ports.held_batches import HeldBatches
from scrapejobs_shared.ports.job_store import JobStore
from scrapejobs_shared.ports.webhooks import WebhookLog


@dataclass(frozen=True, slots=True)
class JobParts:
    store: JobStore
    enqueuer: Enqueuer
    # what a submission, a retry or a replay passes before it is stored (rules/:
    # served options, pattern budget, quota...; none: everything)
    rules: SubmissionRules = field(default_factory=SubmissionRules)
    webhook_log: WebhookLog | None = None  # the deliveries a job's webhook view lists
    held: HeldBatches | None = None  # none: a job's batches are all published at once
