"""A job's own pace: a job may ask for a slower pace toward a host than the host's own
politeness (``options.per_host_rps``, ``/v2`` crawl's ``delay``). That pace is the job's: it
is kept on a gate key of the job's own (``pace~<job>~<host>``), never on the host's shared
document, so another job's (another tenant's) pages of the host never wait on it, and nothing
the job sets outlives it on shared host state.

The host's own pace, shared by every job, is the deployment's ``per_host_rps`` and the site's
``Crawl-delay`` (capped: ``robots_rules.MAX_CRAWL_DELAY_S``); a job asking for a faster pace
than that gets the host's."""

from __future__ import annotations

from scrapejobs_shared.politeness.host_gate import HostLimits

JOB_PACE_PREFIX = "pace~"  # never a host key (those begin with a scheme)


def job_pace_key(job_id: str, host: str) -> str:
    return f"{JOB_PACE_PREFIX}{job_id}~{host}"


def job_pace(per_host_rps: float | None, host: HostLimits) -> HostLimits | None:
    """The limits of the job's own gate key, when it asks for a slower pace than ``host``'s
    (None: the host's pace is the job's)."""
    if not per_host_rps:
        return None
    interval = 1.0 / per_host_rps
    if interval <= host.min_interval_s:
        return None
    return HostLimits(concurrency=host.concurrency, min_interval_s=interval)
