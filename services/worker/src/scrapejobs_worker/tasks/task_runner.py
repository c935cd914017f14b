"""Running one task of a claimed batch: robots.txt, a host permit, the fetch, the decision
(``outcome_policy``), what the host's politeness state learns, extraction and crawl expansion.
Returns the change to record; it never writes the task itself (the batch's recorder does)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from datetime import timedelta
from enum import StrEnum

from opentelemetry.trace import Tracer, get_current_span

from scrapejobs_shared.domain.batch_transitions import FinishTask, HandOffTask, ReleaseTask
from scrapejobs_shared.domain.browser_work import browser_work
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.crawl_identity import crawl_key
from scrapejobs_shared.domain.crawl_spec import CrawlSpec
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import BatchItem, BatchRecord, Handoff, TaskOutcome
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.observability.phase_timer import phase
from scrapejobs_shared.options import OPTIONS, PROXY, RENDER
from scrapejobs_shared.outcomes.page_outcome import ExtractedPage, stopped
from scrapejobs_shared.politeness.admission import HeldPermit, Politeness
from scrapejobs_shared.politeness.host_gate import HostLimits, Throttle
from scrapejobs_shared.politeness.host_key import host_key
from scrapejobs_shared.ports.fetcher import (
    BlockedDestination,
    Fetcher,
    FetchError,
    FetchRequest,
    FetchResponse,
)
from scrapejobs_worker.crawl.crawl_expansion import CrawlExpansion, LinksOverBudget
from scrapejobs_worker.crawl.crawl_sitemaps import CrawlSitemaps
from scrapejobs_worker.extraction.extraction_port import ExtractionStopped, PageExtractor
from scrapejobs_worker.tasks.conditional_fetch import (
    request_headers,
    unchanged_outcome,
    with_validators,
)
from scrapejobs_worker.tasks.fetch_admissions import FetchAdmission
from scrapejobs_worker.tasks.outcome_policy import (
    OUT_OF_TIME,
    Attempt,
    Decision,
    Defer,
    Fail,
    GiveUp,
    HostSignal,
    OutcomeLimits,
    Retry,
    Ruling,
    Succeed,
    after_fetch,
    before_fetch,
)
from scrapejobs_worker.tasks.proxy_escalation import through_stealth, turned_away

CANCELLED = TaskOutcome(TaskStatus.CANCELLED, error="cancelled")


class Kind(StrEnum):
    FINISHED = "finished"
    HANDED_OFF = "handed_off"  # fetched: its ai stage runs on the processing lane
    RETRY = "retry"  # transient: its batch is delivered again (nack)
    DEFER = "defer"  # not its fault: its batch is published again (ack)


@dataclass(frozen=True, slots=True)
class TaskResult:
    change: FinishTask | ReleaseTask | HandOffTask
    kind: Kind
    outcome: str  # for logs and metrics: the status, or retry/defer
    wait_s: float = 0.0  # deferred: how long until its host's or job's pace could admit it


@dataclass(frozen=True, slots=True)
class RunnerPolicy:
    fetch_timeout_s: float = 30.0  # cap on one fetch
    lease_margin_s: float = 10.0  # a host permit is leased for a fetch + this
    min_fetch_s: float = 2.0  # a fetch that cannot get this long is deferred
    max_delivery_attempts: int = 5
    max_deferrals: int = 50
    throttle_hold_s: float = 10.0
    retry_after_cap_s: float = 300.0

    @property
    def permit_lease(self) -> timedelta:
        """How long a permit (a host's, a tenant's, a job's pace) is leased for: a fetch and
        the margin."""
        return timedelta(seconds=self.fetch_timeout_s + self.lease_margin_s)


def _never() -> bool:
    return False


PACE_MARGIN = 1.5  # a fetch cut short must get this many times the batch's longest fetch


@dataclass(slots=True)
class FetchPace:
    """The longest fetch of one delivery so far: a fetch that the delivery's deadline would
    cut short of it is not started (it would likely be cut, and the page fetched again)."""

    longest_s: float = 0.0


@dataclass(frozen=True, slots=True)
class BatchWork:
    """What every task of one delivery shares."""

    batch: BatchRecord
    spec: JobSpec
    deferrals: int
    deadline: float  # monotonic time by which the delivery must answer
    cancelled: Callable[[], bool] = _never  # whether the job's cancel has reached the batch
    pace: FetchPace = field(default_factory=FetchPace)


class TaskRunner:
    def __init__(
        self,
        fetcher: Fetcher,
        extractor: PageExtractor,
        politeness: Politeness,
        crawl: CrawlExpansion,
        clock: Clock,
        tracer: Tracer,
        policy: RunnerPolicy,
        admissions: Sequence[FetchAdmission] = (),
    ) -> None:
        """``admissions``: the worker's own rules before a host's permit (fetch_admissions.py),
        in order."""
        self._fetcher = fetcher
        self._extract = extractor
        self._politeness = politeness
        self._crawl = crawl
        self._clock = clock
        self._tracer = tracer
        self._policy = policy
        self._admissions = tuple(admissions)
        self._permit_lease = policy.permit_lease
        self._sitemaps = CrawlSitemaps(fetcher, politeness, self._permit_lease)

    async def run(self, item: BatchItem, work: BatchWork) -> TaskResult:
        attempt = Attempt(item.attempts, item.error, work.deferrals)
        limits = self._limits(work.spec)
        if (give_up := before_fetch(attempt, limits)) is not None:
            return _finished(item, give_up.outcome)
        try:
            with phase("robots"):
                robots = await self._politeness.robots(
                    item.url, work.spec.options, work.batch.tenant
                )
        except BlockedDestination as exc:  # robots.txt lives where we never connect
            return _finished(item, TaskOutcome(TaskStatus.FAILED, error=f"{exc.reason}: {exc}"))
        if not robots.allowed:
            return _finished(item, TaskOutcome(TaskStatus.FAILED, error="robots_disallowed"))
        host = host_key(item.url)
        host_limits = self._politeness.limits(work.spec.options, robots.crawl_delay_s)
        own = await self._own_permits(item, work, host, host_limits)
        if isinstance(own, TaskResult):
            return own
        with phase("admit"):
            wait_s = _remaining(work) - self._policy.min_fetch_s
            admission = await self._politeness.admit(
                host,
                host_limits,
                self._permit_lease,
                max_wait_s=wait_s,
                tenant=work.batch.tenant,
                lane=work.batch.lane,
            )
        if isinstance(admission, Throttle):
            await _release(*own)
            return _deferred(item, f"host busy ({admission.reason})", admission.wait_s)
        if work.cancelled():  # while it waited for the host
            await _release(admission, *own)
            return cancelled(item)
        timeout, cut_short = self._fetch_timeout(work)
        needed = max(self._policy.min_fetch_s, work.pace.longest_s * PACE_MARGIN)
        if timeout < self._policy.min_fetch_s or (cut_short and timeout < needed):
            await _release(admission, *own)
            return _deferred(item, OUT_OF_TIME)
        result = await self._fetch(item, work, admission, timeout, own)
        if (same := unchanged_outcome(item, result, self._clock())) is not None:
            await self._politeness.host_responded(admission.permit)  # nothing to parse
            return _finished(item, same)
        attempt = replace(attempt, cut_short=cut_short)
        verdict = after_fetch(result, attempt, limits, self._clock())
        await self._tell_host(host, admission, verdict)
        return await self._carry_out(verdict.decision, item, work)

    async def _own_permits(
        self, item: BatchItem, work: BatchWork, host: str, host_limits: HostLimits
    ) -> list[HeldPermit] | TaskResult:
        """The permits of the worker's own rules (held beside the host's), or the page
        deferred by the first that cannot admit it."""
        own: list[HeldPermit] = []
        for rule in self._admissions:
            with phase("admit"):
                wait_s = _remaining(work) - self._policy.min_fetch_s
                got = await rule.admit(work.batch, work.spec, host, host_limits, wait_s)
            if isinstance(got, Throttle):
                await _release(*own)
                return _deferred(item, f"{rule.reason} ({got.reason})", got.wait_s)
            if got is not None:
                own.append(got)
        return own

    def _limits(self, spec: JobSpec) -> OutcomeLimits:
        return OutcomeLimits(
            max_attempts=spec.options.max_attempts,
            max_delivery_attempts=self._policy.max_delivery_attempts,
            max_deferrals=self._policy.max_deferrals,
            throttle_hold_s=self._policy.throttle_hold_s,
            retry_after_cap_s=self._policy.retry_after_cap_s,
        )

    def _fetch_timeout(self, work: BatchWork) -> tuple[float, bool]:
        """The fetch's timeout, and whether it is cut short: within the time this delivery has
        left rather than the job's own timeout."""
        allowed = min(work.spec.options.timeout_s, self._policy.fetch_timeout_s)
        left = _remaining(work) - 1.0
        return min(allowed, left), left < allowed

    async def _fetch(
        self,
        item: BatchItem,
        work: BatchWork,
        held: HeldPermit,
        timeout: float,
        own: Sequence[HeldPermit],
    ) -> FetchResponse | FetchError:
        """The fetch, within ``timeout``; the host's (and the tenant's and job's own) permits
        are released right after it."""
        try:
            options = work.spec.options
            request = FetchRequest(
                item.url,
                request_headers(item, OPTIONS.fetch_headers(options)),
                timeout,
                render=RENDER.of(options),
                route=self._politeness.route(options, work.batch.tenant, work.batch.job_id),
                browser=browser_work(options, work.batch, item.task_id),
                browser_context=OPTIONS.browser_context(options),
            )
            with phase("fetch"), self._fetch_span(item.url):
                started = time.perf_counter()
                try:
                    response = await self._fetcher.fetch(request)
                except FetchError as exc:
                    return exc
                left = timeout - (time.perf_counter() - started)
                if PROXY.escalates(options) and turned_away(response) and left > 1.0:
                    response = await through_stealth(self._fetcher, request, response, left)
                pace = work.pace
                pace.longest_s = max(pace.longest_s, time.perf_counter() - started)
                return response
        finally:
            await _release(held, *own)

    def _fetch_span(self, url: str) -> AbstractContextManager[object]:
        """A span per fetch inside a recorded batch span. Unrecorded, it would not be recorded
        either (the ratio sampler decides by trace id, which a child shares), and making it
        costs CPU on every page (bench/README.md, "Instructions per page")."""
        if not get_current_span().is_recording():
            return nullcontext()
        return self._tracer.start_as_current_span("fetch", attributes={"url.full": url})

    async def _tell_host(self, host: str, held: HeldPermit, verdict: Ruling) -> None:
        if verdict.host is HostSignal.RESPONDED:
            await self._politeness.host_responded(held.permit)
        elif verdict.host is HostSignal.FAILED:
            await self._politeness.host_failed(host)
        elif verdict.host is HostSignal.THROTTLED:
            await self._politeness.host_throttled(host, verdict.hold_s)
            if not isinstance(verdict.decision, Defer):
                await self._politeness.host_failed(host)

    async def _carry_out(self, decision: Decision, item: BatchItem, work: BatchWork) -> TaskResult:
        if isinstance(decision, Fail | GiveUp):
            return _finished(item, decision.outcome)
        if isinstance(decision, Retry):
            return TaskResult(ReleaseTask(item.task_id, decision.error), Kind.RETRY, "retry")
        if isinstance(decision, Defer):
            return _deferred(item, decision.reason)
        assert isinstance(decision, Succeed)
        with phase("extract"):
            try:
                page = await self._extract.extract(decision.response, work.spec)
            except ExtractionStopped as exc:  # past its CPU or memory budget
                page = stopped(decision.response, exc.error)
        try:
            await self._expand(page, item, work, decision.response.url)
        except LinksOverBudget as exc:  # the same links would cost the same again
            page = stopped(decision.response, exc.error)
        outcome = replace(page.outcome, fetched_at=self._clock())
        outcome = with_validators(outcome, decision.response, work.spec)
        if page.model_input is not None:
            handoff = HandOffTask(item.task_id, Handoff(outcome, page.model_input))
            return TaskResult(handoff, Kind.HANDED_OFF, "processing")
        return _finished(item, outcome)

    async def _expand(
        self, page: ExtractedPage, item: BatchItem, work: BatchWork, page_url: str
    ) -> None:
        """A crawl's next pages: the page's links (a page a pipeline stage refused too) and,
        from its start page, its site's sitemaps."""
        crawl = work.spec.crawl
        if crawl is not None and page.links and crawl.sitemap != "only":
            with phase("expand"):
                await self._crawl.expand(work.spec, work.batch, item, page_url, page.links)
        if crawl is not None and crawl.sitemap != "skip" and _starts(item, crawl):
            with phase("sitemaps"):
                pages = await self._sitemaps.pages(
                    item.url, work.spec, work.batch.tenant, work.deadline
                )
                await self._crawl.expand_sitemap(work.spec, work.batch, item, pages)


def _starts(item: BatchItem, crawl: CrawlSpec) -> bool:
    """Whether ``item`` is the crawl's start page (a sitemap's pages are at depth 0 too)."""
    return item.depth == 0 and crawl_key(item.url) == crawl_key(crawl.start_url)


def cancelled(item: BatchItem) -> TaskResult:
    return _finished(item, CANCELLED)


def _finished(item: BatchItem, outcome: TaskOutcome) -> TaskResult:
    return TaskResult(FinishTask(item.task_id, outcome), Kind.FINISHED, outcome.status.value)


def _deferred(item: BatchItem, reason: str, wait_s: float = 0.0) -> TaskResult:
    change = ReleaseTask(item.task_id, reason, refund_attempt=True)
    return TaskResult(change, Kind.DEFER, "defer", wait_s)


async def _release(*permits: HeldPermit | None) -> None:
    for permit in permits:
        if permit is not None:
            await permit.release()


def _remaining(work: BatchWork) -> float:
    return work.deadline - time.monotonic()
