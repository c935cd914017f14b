"""Recovering and maintaining work: submissions stopped mid-publish, batches whose messages
were lost, webhook events never attempted, and dead-lettered or failed tasks replayed. The
scheduled maintenance calls and the dead-letter API use it; every step is safe to repeat."""

from __future__ import annotations

import contextlib
import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from scrapejobs_dispatcher.jobs.job_errors import (
    UPLOAD_LABEL,
    InvalidFilter,
    UploadNotFetched,
    live_job,
)
from scrapejobs_dispatcher.jobs.job_parts import JobParts
from scrapejobs_dispatcher.rules.rules import Admission
from scrapejobs_dispatcher.tenants.tenant_quotas import QuotaExceeded
from scrapejobs_shared.delivery.enqueue import Enqueuer
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.records import BatchRecord, JobRecord, TaskRecord
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.domain.tenancy import Caller
from scrapejobs_shared.politeness.host_gate import HostGate
from scrapejobs_shared.politeness.host_key import host_key, key_of, origin_url
from scrapejobs_shared.ports.job_store import Page
from scrapejobs_shared.ports.jobs import Jobs
from scrapejobs_shared.ports.page import PageRequest
from scrapejobs_shared.ports.recovery_queries import RecoveryQueries, TaskScope

log = logging.getLogger(__name__)

REPUBLISH_PAGE = 500
REPLAY_LIMIT = 500  # dead letters replayed per call
CLOCK_SKEW = timedelta(minutes=1)  # writes stamped later than this ahead are not progress
WAKE_GRACE = timedelta(minutes=1)  # a deferred batch this late past its time: its wake was lost
REPLAY_PAGE = 500
MAX_JOB_RETRY = 10_000  # a job's tasks: the largest submission


@dataclass(frozen=True, slots=True)
class Reconciled:
    batches: int  # published again
    tasks: int  # their open tasks
    skipped: int  # stalled, but their job (or the system) is moving


class Recovery:
    def __init__(self, parts: JobParts, host_gate: HostGate | None = None) -> None:
        """``host_gate``: the breakers an explicit replay closes (none without it); the held
        batches (``parts.held``): whose broken chains a reconcile resumes; the rules: what a
        retry or replay passes as a submission does (the deployment still serves the job, its
        tenant's quota takes the pages run again)."""
        self._rules = parts.rules
        self._held = parts.held
        self._store = parts.store
        self._enqueuer = parts.enqueuer
        self._clock = parts.enqueuer.clock
        self._events = parts.enqueuer.events
        self._webhook_log = parts.webhook_log
        self._host_gate = host_gate

    async def _job(self, job_id: str, caller: Caller | None) -> JobRecord:
        return await live_job(self._store, job_id, self._clock(), caller)

    async def resend_lost_webhooks(
        self, older_than: timedelta, within: timedelta, limit: int = 200
    ) -> int:
        """Self-healing for webhook events: jobs that ended between ``within`` and
        ``older_than`` ago whose event was never attempted get it queued again."""
        if self._events is None or self._webhook_log is None:
            return 0
        now = self._clock()
        ended = await self._store.finished_between(now - within, now - older_than, limit)
        resent = 0
        for job in ended:
            if job.spec.webhook is not None:
                resent += await self._events.announce_if_lost(job, self._webhook_log)
        return resent

    async def republish_stuck(self, older_than: timedelta, limit: int = 50) -> tuple[int, int]:
        """Recover submissions that stopped between writing batches and publishing them (a
        crash, a deploy, a Pub/Sub outage): publish every batch with open tasks again (a batch
        is claimed by one delivery at a time, so duplicates are harmless). Returns (jobs,
        tasks) republished."""
        jobs = await self._store.stuck_publishing(self._clock() - older_than, limit)
        republished = 0
        for job in jobs:
            republished += await publish_open_batches(
                self._store, self._store, self._enqueuer, job.id, self._clock
            )
            log.warning("republished a stuck submission", extra={"job_id": job.id})
        return len(jobs), republished

    async def reconcile(self, stalled_for: timedelta, limit: int = 200) -> Reconciled:
        """Self-healing for lost messages (a broker restart, a purge, an emulator that drops
        what it pushed to a restarting worker): publish again the batches with open tasks that
        nothing has written for ``stalled_for`` and no delivery holds.

        It never fights a healthy backlog: a job that made progress within ``stalled_for``
        is moving and will reach its batches; while any job is moving, a batch never claimed
        may just be waiting in the queue behind others, so it is left alone until the system
        is quiet. Duplicates are harmless (a batch is claimed by one delivery at a time and
        finished tasks are skipped); at most ``limit`` batches per call."""
        now = self._clock()
        cutoff = now - stalled_for
        resumed = await self._resume_held(cutoff, limit)
        resumed += await self._wake_overdue(now - WAKE_GRACE, limit)
        stalled = await self._store.stalled_batches(cutoff, now, limit)
        if not stalled:
            return Reconciled(resumed, 0, 0)
        until = now + CLOCK_SKEW
        system_moving = await self._store.progressed_since(cutoff, until)
        by_job: dict[str, list[BatchRecord]] = {}
        for batch in stalled:
            by_job.setdefault(batch.job_id, []).append(batch)
        republish: list[BatchRecord] = []
        for job_id, batches in by_job.items():
            if await self._store.progressed_since(cutoff, until, job_id):
                continue
            republish += [b for b in batches if not (system_moving and _never_claimed(b))]
        failed = await self._enqueuer.publish(republish)
        tasks = sum(len(b.open_items) for b in republish) - failed
        if republish:
            log.warning(
                "republished stalled batches",
                extra={"batches": len(republish), "tasks": tasks, "jobs": len(by_job)},
            )
        return Reconciled(resumed + len(republish), tasks, len(stalled) - len(republish))

    async def _resume_held(self, cutoff: datetime, limit: int) -> int:
        """Held batches whose chain broke (the delivery that should have released the next
        died first; its host has no active batch of the job): release and publish one each."""
        if self._held is None:
            return 0
        released = []
        for job_id, group in await self._held.stalled_holds(cutoff, limit):
            released += await self._held.release(job_id, group, self._clock(), 1)
        if released:
            await self._enqueuer.publish(released)
            log.warning("resumed held batches", extra={"batches": len(released)})
        return len(released)

    async def _wake_overdue(self, before: datetime, limit: int) -> int:
        """Deferred batches still waiting for a time before ``before``: the worker that would
        have woken them stopped (batch_waits.py); woken and published with their deferrals."""
        if self._held is None:
            return 0
        woken = 0
        for job_id, batch_id in await self._held.overdue(before, limit):
            for batch in await self._held.wake(job_id, batch_id, self._clock()):
                if await self._enqueuer.republish(batch, batch.wait_deferrals):
                    woken += 1
        if woken:
            log.warning("woke deferred batches past their time", extra={"batches": woken})
        return woken

    async def dead_letters(
        self,
        job_id: str | None,
        host: str | None,
        page_size: int,
        page_token: str | None,
        caller: Caller | None,
        tenant: str | None = None,
    ) -> Page[TaskRecord]:
        """Dead-lettered tasks, most recent first: of one job, or of every job of the tenant
        ``caller`` sees (an admin's: ``tenant``'s, or every tenant's); ``host`` a URL or a host
        key."""
        if job_id is not None:
            await self._job(job_id, caller)
        scope = TaskScope(job_id, _host_filter(host), _tenant_of(job_id, caller, tenant))
        return await self._store.tasks_with_status(
            TaskStatus.DEAD_LETTERED, scope, PageRequest(page_size, page_token)
        )

    async def replay_dead_letters(
        self,
        job_id: str | None,
        host: str | None,
        caller: Caller | None,
        limit: int = REPLAY_LIMIT,
        tenant: str | None = None,
    ) -> int:
        """Replay up to ``limit`` dead letters matching the filters, of the jobs ``caller``
        may see (an admin's: ``tenant``'s, or every tenant's); returns how many."""
        if job_id is not None:
            await self._job(job_id, caller)
        scope = TaskScope(job_id, _host_filter(host), _tenant_of(job_id, caller, tenant))
        return await self._replay(TaskStatus.DEAD_LETTERED, scope, limit)

    async def replay_dead_letter(self, job_id: str, task_id: str, caller: Caller | None) -> int:
        """Replay one dead-lettered task (1), or nothing (0) when it is no longer dead-lettered."""
        await self._job(job_id, caller)
        task = await self._store.get_task(job_id, task_id)
        if task is None or task.status is not TaskStatus.DEAD_LETTERED or task.batch_id is None:
            return 0
        return await self._reopen({(job_id, task.batch_id): [task.id]}, TaskStatus.DEAD_LETTERED)

    async def unsuccessful(
        self, job_id: str, limit: int, caller: Caller | None
    ) -> list[TaskRecord]:
        """The job's failed and dead-lettered tasks (at most ``limit`` of each), most recent
        first: what went wrong, with each task's last error."""
        await self._job(job_id, caller)
        found: list[TaskRecord] = []
        for status in (TaskStatus.DEAD_LETTERED, TaskStatus.FAILED):
            page = await self._store.tasks_with_status(
                status, TaskScope(job_id), PageRequest(limit)
            )
            found += page.items
        return sorted(found, key=lambda task: task.updated_at, reverse=True)

    async def retry_job(self, job_id: str, status: TaskStatus, caller: Caller | None) -> int:
        """Replay every task of the job that ended ``status`` (failed or dead-lettered); a
        job that read an upload is refused (``UploadNotFetched``: nothing can fetch it)."""
        job = await self._job(job_id, caller)
        if UPLOAD_LABEL in job.labels:
            raise UploadNotFetched(job_id)
        return await self._replay(status, TaskScope(job_id), MAX_JOB_RETRY)

    async def _replay(self, status: TaskStatus, scope: TaskScope, limit: int) -> int:
        """Replayed tasks go back to ``queued`` with fresh attempts, batch by batch (counts move
        in the same commit), and their batches are published again. Tasks already replayed are
        no longer ``status``: a second replay finds nothing."""
        by_batch: dict[tuple[str, str], list[str]] = {}
        token: str | None = None
        found = 0
        while found < limit:
            page = await self._store.tasks_with_status(
                status, scope, PageRequest(min(REPLAY_PAGE, limit - found), token)
            )
            for task in page.items:
                if task.batch_id is not None:
                    by_batch.setdefault((task.job_id, task.batch_id), []).append(task.id)
            found += len(page.items)
            token = page.next_page_token
            if token is None:
                break
        return await self._reopen(by_batch, status)

    async def _admitted(
        self, by_batch: dict[tuple[str, str], list[str]]
    ) -> tuple[dict[tuple[str, str], list[str]], dict[str, Admission]]:
        """The batches of the jobs whose tasks may run again, each job admitted as a
        submission of the tasks it replays (``SubmissionRules``). A replay of one job answers
        the job's refusal; a replay of many leaves a refused job's tasks as they are."""
        wanted: dict[str, int] = {}
        for (job_id, _), task_ids in by_batch.items():
            wanted[job_id] = wanted.get(job_id, 0) + len(task_ids)
        admitted: dict[str, Admission] = {}
        for job_id, tasks in wanted.items():
            job = await self._store.get_job(job_id)
            if job is None:
                continue
            replay = Admission(
                job.tenant, tasks, f"{job_id}~replay~{uuid.uuid4().hex}", self._clock()
            )
            try:
                await self._rules.admit(job.spec, replay)
            except (QuotaExceeded, ValueError):
                if len(wanted) == 1:
                    raise
                log.warning("replay refused", extra={"job_id": job_id}, exc_info=True)
                continue
            admitted[job_id] = replay
        kept = {key: ids for key, ids in by_batch.items() if key[0] in admitted}
        return kept, admitted

    async def _reopen(self, by_batch: dict[tuple[str, str], list[str]], status: TaskStatus) -> int:
        """Reopen the given tasks of each (job, batch) that are still ``status``, of the jobs
        admitted again (``_admitted``), publish the batches again; returns how many tasks went
        back to ``queued`` (a job's reservation of those that did not is given back)."""
        by_batch, admitted = await self._admitted(by_batch)
        reopened: list[BatchRecord] = []
        urls: list[str] = []  # of the tasks that went back to queued
        ran: dict[str, int] = {}  # tasks reopened, by job
        statuses = frozenset({status})
        for (job, batch_id), task_ids in by_batch.items():
            batch = await self._store.reopen(job, batch_id, task_ids, statuses, self._clock())
            if batch is not None:
                reopened.append(batch)
                wanted = set(task_ids)
                queued = [
                    i.url
                    for i in batch.items
                    if i.task_id in wanted and i.status is TaskStatus.QUEUED
                ]
                urls += queued
                ran[job] = ran.get(job, 0) + len(queued)
        for job, replay in admitted.items():
            await self._rules.release(replay, replay.pages - ran.get(job, 0), final=True)
        replayed = len(urls)
        await self._close_breakers(urls)
        await self._enqueuer.publish(reopened)
        if replayed:
            log.info("tasks replayed", extra={"tasks": replayed, "status": status.value})
        return replayed

    async def _close_breakers(self, urls: list[str]) -> None:
        """A replay is the user saying "try again now": the replayed tasks' hosts whose breaker
        is open are tried at once, before the batches are published; failures reopen them."""
        if self._host_gate is None:
            return
        hosts: set[str] = set()
        for url in urls:
            with contextlib.suppress(ValueError):
                hosts.add(host_key(url))
        now = self._clock()
        for host in sorted(hosts):
            if await self._host_gate.close_breaker(host, now):
                log.info("breaker closed by a replay", extra={"host": origin_url(host)})


async def publish_open_batches(
    queries: RecoveryQueries, jobs: Jobs, enqueuer: Enqueuer, job_id: str, clock: Clock
) -> int:
    """Publish every batch of the job with open tasks (``queries``), then mark it published
    (``jobs``); returns how many tasks were published."""
    published = 0
    token: str | None = None
    while True:
        page = await queries.open_batches(job_id, REPUBLISH_PAGE, token)
        unheld = [batch for batch in page.items if not batch.held]  # held: the workers release
        tasks = sum(len(batch.open_items) for batch in unheld)
        published += tasks - await enqueuer.publish(unheld)
        token = page.next_page_token
        if token is None:
            break
    await jobs.mark_published([job_id], clock())
    return published


def _host_filter(host: str | None) -> str | None:
    """A URL or a host key → the host key results are listed by; ``InvalidFilter`` when it is
    neither (a value the store could not even be asked about, such as a 2,000-character
    string, must never reach it)."""
    if not host:
        return None
    try:
        return key_of(host)
    except ValueError as exc:
        raise InvalidFilter("host", str(exc)) from None


def _never_claimed(batch: BatchRecord) -> bool:
    return all(i.status is TaskStatus.QUEUED and i.attempts == 0 for i in batch.items)


def _tenant_of(job_id: str | None, caller: Caller | None, requested: str | None) -> str | None:
    """The tenant a dead-letter query is limited to: none within one job (its tenant was
    checked), else the caller's scope (a member's own tenant; an admin's filter)."""
    if job_id is not None:
        return None
    if caller is None:
        return requested
    return caller.scope(requested)
