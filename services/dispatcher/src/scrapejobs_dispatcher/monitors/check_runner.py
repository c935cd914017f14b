"""A monitor's checks: started (now, or by the schedule's tick), each as an ordinary job, then
settled once that job finished: its pages compared with the monitor's snapshots.

* **Starting** is idempotent: a scheduled check's id is derived from its monitor and its
  scheduled time, so a tick delivered twice starts one check, and its job's id from the
  check's. A check started while the monitor's previous check still runs runs nothing and
  ends ``skipped_overlap``. A monitor of listed URLs asks for each page with the validators
  its snapshot keeps (page_validators.py): a page the site says is unchanged keeps no result
  of its own, and the check counts it ``same``.
* **Settling** happens when anyone looks (a read of the check, the next start, the tick
  every minute): one caller at a time (a lease on the check), and again from the start if
  that caller died; a hundred results at a time, each page compared with the baseline its
  snapshot keeps for this check, so a settle done twice writes the same pages and queues the
  same events (monitor_events.py). The pages, snapshots and events come before the check's
  final status.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from scrapejobs_dispatcher.jobs.job_errors import JobNotFound
from scrapejobs_dispatcher.monitors.monitor_service import MonitorConflict, monitor_of
from scrapejobs_dispatcher.monitors.page_comparisons import PageComparisons
from scrapejobs_dispatcher.submission.intake import JobIntake
from scrapejobs_dispatcher.submission.submission import Submission
from scrapejobs_dispatcher.tenants.tenant_quotas import QuotaExceeded
from scrapejobs_shared.domain.monitor_checks import (
    CheckPage,
    CheckRecord,
    CheckStatus,
    PageStatus,
    Trigger,
)
from scrapejobs_shared.domain.monitor_events import check_event, notified, page_event
from scrapejobs_shared.domain.monitors import MonitorRecord
from scrapejobs_shared.domain.page_validators import PageValidators
from scrapejobs_shared.domain.records import JobRecord
from scrapejobs_shared.domain.statuses import JobStatus
from scrapejobs_shared.domain.webhook_events import WebhookEvent
from scrapejobs_shared.domain.webhook_spec import WebhookEventType
from scrapejobs_shared.errors import NotFound
from scrapejobs_shared.observability.store_ops import counting
from scrapejobs_shared.ports.monitor_checks import MonitorChecks
from scrapejobs_shared.ports.monitor_store import MonitorStore
from scrapejobs_shared.ports.page import PageRequest
from scrapejobs_shared.ports.webhooks import WebhookOutbox

log = logging.getLogger(__name__)
GONE = (404, 410)  # a page answered so is removed
SETTLE_LEASE = timedelta(seconds=120)
RESULTS_PAGE = 100
SAVE_ATTEMPTS = 5
MAX_DEPARTED = 1000  # pages gone from the targets a check's record names (more: read again)


class CheckNotFound(NotFound):
    """No such check of that monitor."""

    template = "no such check"


@dataclass(frozen=True, slots=True)
class Baseline:
    """What a check starts from (a monitor of listed URLs; None of it for a crawl)."""

    validators: dict[str, PageValidators] | None  # by URL: what each page is asked with
    departed: tuple[str, ...] | None  # pages gone from the targets (None: not known)


# What keeps a check from starting however often it is tried (the tenant's quota spent, an
# option this deployment no longer serves, a job that is no longer valid): the check is
# recorded failed with it, and the monitor's schedule moves on (monitor_tick.py).
CANNOT_START: tuple[type[Exception], ...] = (QuotaExceeded, ValueError)


@dataclass(eq=False)
class CheckRunner:
    monitors: MonitorStore
    checks: MonitorChecks
    jobs: JobIntake
    clock: Callable[[], datetime]
    comparisons: PageComparisons
    outbox: WebhookOutbox | None = None

    async def start(
        self,
        tenant: str,
        monitor_id: str,
        trigger: Trigger = "manual",
        scheduled_for: datetime | None = None,
    ) -> CheckRecord:
        """Start a check of the monitor (``scheduled_for``: the schedule's time it is for).
        The monitor's document names its last check before the check's job is submitted,
        saved against the version read: of two starts at once, one runs and the other finds
        it running (``skipped_overlap``)."""
        check_id = _check_id(monitor_id, scheduled_for)
        for _ in range(SAVE_ATTEMPTS):
            monitor = await monitor_of(self.monitors, tenant, monitor_id)
            existing = await self.checks.get(monitor_id, check_id)
            if existing is not None:  # a start retried: its job submitted, if it was not
                baseline = await self._baseline(monitor, existing.job_id)
                return await self._submitted(monitor, existing, baseline)
            now = self.clock()
            previous = await self._last_check(monitor)
            if previous is not None and not previous.finished:
                return await self._skipped(monitor, check_id, trigger, now)
            job_id = f"check-{check_id.removeprefix('chk_')}"
            baseline = await self._baseline(monitor, job_id)
            check = CheckRecord(
                check_id,
                monitor_id,
                tenant,
                trigger,
                CheckStatus.QUEUED,
                now,
                job_id=job_id,
                retention_days=monitor.request.retention_days,
                departed=baseline.departed,
            )
            noted = replace(
                monitor,
                last_check_id=check.id,
                last_check_at=now,
                checks=monitor.checks + 1,
                updated_at=monitor.stamp(now),
            )
            if not await self.monitors.save(noted, read_at=monitor.updated_at):
                continue  # changed meanwhile (another start?): look again
            await self.checks.add(check)
            return await self._submitted(noted, check, baseline)
        raise MonitorConflict(monitor_id)

    async def _skipped(
        self, monitor: MonitorRecord, check_id: str, trigger: Trigger, now: datetime
    ) -> CheckRecord:
        skipped = CheckRecord(
            check_id,
            monitor.id,
            monitor.tenant,
            trigger,
            CheckStatus.SKIPPED_OVERLAP,
            now,
            finished_at=now,
            retention_days=monitor.request.retention_days,
        )
        await self.checks.add(skipped)
        log.info("check skipped: the previous one still runs", extra={"monitor_id": monitor.id})
        return await self.checks.get(monitor.id, check_id) or skipped

    async def _baseline(self, monitor: MonitorRecord, job_id: str | None) -> Baseline:
        """What a check of a monitor of listed URLs starts from: each page's validators (it
        asks for each page with them) and the pages gone from the targets since (it finds
        them removed). None of it for a crawl or a search, which fetch every page in full: a
        page's links (the search's results) are what finds the next ones."""
        if monitor.request.crawl is not None or monitor.request.search is not None:
            return Baseline(None, None)
        with counting() as ops:
            entries = await self.checks.snapshot_entries(monitor.id)
        targets = set(monitor.request.target_urls())
        validators = {e.url: e.validators for e in entries if e.validators is not None}
        departed = tuple(e.url for e in entries if e.url not in targets and e.has_current)
        log.info(
            "check validators read",
            extra={
                "monitor_id": monitor.id,
                "job_id": job_id,
                "pages": len(entries),
                "firestore_reads": ops.reads,
            },
        )
        return Baseline(validators, departed if len(departed) <= MAX_DEPARTED else None)

    async def _submitted(
        self, monitor: MonitorRecord, check: CheckRecord, baseline: Baseline
    ) -> CheckRecord:
        """``check``, its job submitted (once: the job's id is the check's). A job that
        cannot be submitted (``CANNOT_START``) leaves the check failed with the reason, and
        the error is raised on."""
        if check.job_id is not None and not check.finished:
            try:
                await self.jobs.submit(
                    Submission(
                        monitor.request.job_request(),  # a search's: what it finds now
                        monitor.tenant,
                        job_id=check.job_id,
                        trigger=f"monitor {monitor.id}",
                        validators=baseline.validators,
                    )
                )
            except CANNOT_START as exc:
                now = self.clock()
                failed = replace(check, status=CheckStatus.FAILED, finished_at=now, error=str(exc))
                await self.checks.finish(failed, ())
                log.warning(
                    "check could not start",
                    extra={"monitor_id": monitor.id, "check_id": check.id, "why": str(exc)},
                )
                raise
        return check

    async def listed(
        self, tenant: str, monitor_id: str, limit: int, after: str | None
    ) -> tuple[Sequence[CheckRecord], str | None]:
        await monitor_of(self.monitors, tenant, monitor_id)
        return await self.checks.listed(monitor_id, limit, after)

    async def pages(
        self,
        tenant: str,
        monitor_id: str,
        check_id: str,
        status: PageStatus | None,
        limit: int,
        after: str | None,
    ) -> tuple[CheckRecord, Sequence[CheckPage], str | None]:
        """The check (settled first if it can be) and a page of its pages."""
        check = await self.check(tenant, monitor_id, check_id)
        pages, token = await self.pages_of(check, status, limit, after)
        return check, pages, token

    async def pages_of(
        self, check: CheckRecord, status: PageStatus | None, limit: int, after: str | None
    ) -> tuple[Sequence[CheckPage], str | None]:
        """A page of the pages of a check already read (``check``)."""
        return await self.checks.pages(
            check.monitor_id, check.id, status, PageRequest(limit, after)
        )

    async def check(self, tenant: str, monitor_id: str, check_id: str) -> CheckRecord:
        """The check, settled first if its job has finished."""
        monitor = await monitor_of(self.monitors, tenant, monitor_id)
        found = await self.checks.get(monitor_id, check_id)
        if found is None or found.tenant != tenant:
            raise CheckNotFound(check_id)
        return await self.settle(monitor, found)

    async def settle(self, monitor: MonitorRecord, check: CheckRecord) -> CheckRecord:
        """Compare the check's pages once its job finished; the check as it now stands."""
        if check.finished or check.job_id is None:
            return check
        try:
            job = (await self.jobs.get(check.job_id, None)).job
        except JobNotFound:
            job = None
        if job is not None and not job.status.terminal:
            if job.status is JobStatus.RUNNING and check.status is CheckStatus.QUEUED:
                await self.checks.mark(monitor.id, check.id, CheckStatus.RUNNING)
                return replace(check, status=CheckStatus.RUNNING)
            return check
        now = self.clock()
        claimed = await self.checks.claim(monitor.id, check.id, now, now + SETTLE_LEASE)
        if claimed is None:  # another caller compares it, or it just finished
            return await self.checks.get(monitor.id, check.id) or check
        with counting() as ops:
            summary, same = await self._compare(monitor, check, job)
            total = sum(summary.values())
            status = _status(job.status if job is not None else None, summary, total)
            done = replace(
                check,
                status=status,
                finished_at=self.clock(),
                summary={"total": total, **{s.value: summary.get(s.value, 0) for s in PageStatus}},
            )
            if _wants(job, "monitor.check.completed"):
                await self._announce([check_event(done, done.finished_at or now)])
            await self.checks.finish(done, same)
        log.info(
            "check finished",
            extra={
                "monitor_id": monitor.id,
                "check_id": check.id,
                "job_id": check.job_id,
                "status": status.value,
                "pages": total,
                "firestore_reads": ops.reads,
                "firestore_writes": ops.writes,
            },
        )
        return done

    async def _compare(
        self, monitor: MonitorRecord, check: CheckRecord, job: JobRecord | None
    ) -> tuple[Counter[str], list[CheckPage]]:
        """Compare the check's results a page of them at a time, each with its page's
        snapshot, writing what changed as it goes; then count the pages no result was kept
        for (the site said they had not changed) and find those gone from the targets. The
        count of pages by status, and the ``same`` ones (``finish`` writes them)."""
        # the pages with a snapshot, read unless the check's start found those gone from the
        # targets already (a monitor of listed URLs: departed)
        entries = None
        if check.departed is None:
            entries = {e.url: e for e in await self.checks.snapshot_entries(monitor.id)}
        summary: Counter[str] = Counter()
        same: list[CheckPage] = []
        seen: set[str] = set()
        token: str | None = None
        while job is not None:
            results = await self.jobs.results(job.id, RESULTS_PAGE, token, None)
            urls = [task.url for task in results.items]
            known = urls if entries is None else [url for url in urls if url in entries]
            snapshots = await self.checks.snapshots_of(monitor.id, known)
            pages, changed = await self.comparisons.compared(
                monitor, check.id, results.items, snapshots
            )
            await self.checks.record(check, [p for p in pages if not p.same], changed)
            await self._announce_pages(job, check, pages)
            same += [page for page in pages if page.same]
            summary.update(page.status.value for page in pages)
            seen.update(urls)
            token = results.next_page_token
            if token is None:
                break
        if job is not None and job.status is JobStatus.COMPLETED and monitor.request.crawl is None:
            targets = dict.fromkeys(monitor.request.target_urls())
            unchanged = [CheckPage(url, PageStatus.SAME) for url in targets if url not in seen]
            same += unchanged
            summary[PageStatus.SAME.value] += len(unchanged)
            seen.update(targets)
        if entries is None:
            gone = [url for url in check.departed or () if url not in seen]
        else:
            gone = [u for u, e in entries.items() if u not in seen and e.remembered(check.id)]
        for start in range(0, len(gone), RESULTS_PAGE):
            found = await self.checks.snapshots_of(monitor.id, gone[start : start + RESULTS_PAGE])
            leaving = [s for s in found.values() if s.baseline(check.id) is not None]
            removed = [CheckPage(s.url, PageStatus.REMOVED, notify=True) for s in leaving]
            await self.checks.record(check, removed, [s.after(check.id, None) for s in leaving])
            await self._announce_pages(job, check, removed)
            summary[PageStatus.REMOVED.value] += len(removed)
        return summary, same

    async def _announce_pages(
        self, job: JobRecord | None, check: CheckRecord, pages: Sequence[CheckPage]
    ) -> None:
        if _wants(job, "monitor.page"):
            now = self.clock()
            await self._announce([page_event(check, p, now) for p in pages if notified(p)])

    async def _announce(self, events: Sequence[WebhookEvent]) -> None:
        """Queue the events (raises if one could not be: the comparison is done again, and
        announces them again under the same ids)."""
        if self.outbox is None or not events:
            return
        await asyncio.gather(*(self.outbox.publish(event) for event in events))

    async def _last_check(self, monitor: MonitorRecord) -> CheckRecord | None:
        if monitor.last_check_id is None:
            return None
        last = await self.checks.get(monitor.id, monitor.last_check_id)
        return None if last is None else await self.settle(monitor, last)


def _wants(job: JobRecord | None, event: WebhookEventType) -> bool:
    """Whether the check's job carries a webhook that wants ``event`` (the monitor's, as it
    was when the check started)."""
    webhook = job.spec.webhook if job is not None else None
    return webhook is not None and webhook.wants(event)


def _check_id(monitor_id: str, scheduled_for: datetime | None) -> str:
    if scheduled_for is None:
        return f"chk_{uuid.uuid4().hex}"
    slot = f"{monitor_id}|{scheduled_for.isoformat()}"
    return f"chk_{hashlib.sha256(slot.encode()).hexdigest()[:32]}"


def _status(job: JobStatus | None, summary: Counter[str], total: int) -> CheckStatus:
    errors = summary.get(PageStatus.ERROR.value, 0)
    if job is not JobStatus.COMPLETED or (total and errors == total):
        return CheckStatus.FAILED
    return CheckStatus.PARTIAL if errors else CheckStatus.COMPLETED
