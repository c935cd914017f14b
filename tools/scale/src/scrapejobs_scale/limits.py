"""The documented limits the simulation enforces, each with where Google states it, in one
table (``LIMITS``; docs/scale.md prints it). Each row's ``enforced`` says what the model does
when a run reaches it; the figures themselves are the ``FirestoreLimits``,
``PushLimits`` and ``CloudRunLimits`` defaults, so a test or a what-if run can change one."""

from __future__ import annotations

from dataclasses import dataclass

from scrapejobs_scale.instance_cpu import PAGE_CPU_S

FIRESTORE_QUOTAS = "https://cloud.google.com/firestore/quotas"
FIRESTORE_PRACTICES = "https://cloud.google.com/firestore/docs/best-practices"
FIRESTORE_ERRORS = "https://cloud.google.com/firestore/docs/understand-error-codes"
FIRESTORE_PRICING = "https://cloud.google.com/firestore/pricing"
PUBSUB_PUSH = "https://cloud.google.com/pubsub/docs/push"
PUBSUB_QUOTAS = "https://cloud.google.com/pubsub/quotas"
RUN_CONCURRENCY = "https://cloud.google.com/run/docs/about-concurrency"
RUN_TIMEOUT = "https://cloud.google.com/run/docs/configuring/request-timeout"
RUN_INSTANCES = "https://cloud.google.com/run/docs/configuring/max-instances"
RUN_CPU = "https://cloud.google.com/run/docs/configuring/services/cpu"


@dataclass(frozen=True, slots=True)
class FirestoreLimits:
    sustained_writes_per_doc_s: float = 1.0
    # "you can surpass the limit in short bursts": how many writes above the sustained rate a
    # document takes before the model refuses (Google gives no figure; 10 is our reading, and
    # docs/scale.md says so)
    burst_writes_per_doc: float = 10.0
    writes_per_commit: int = 500
    document_bytes: int = 1_048_576
    ramp_start_ops_s: float = 500.0  # a new collection: 500 operations a second ...
    ramp_growth: float = 1.5  # ... then 50% more ...
    ramp_step_s: float = 300.0  # ... every 5 minutes


@dataclass(frozen=True, slots=True)
class PushLimits:
    ack_deadline_s: float = 60.0  # ours (terraform: ack_deadline_seconds); 10 to 600
    window_start: int = 3  # "a small single-digit window size"
    window_max: int = 3_000  # what the model lets slow start reach per subscription


@dataclass(frozen=True, slots=True)
class CloudRunLimits:
    max_instances: int = 100  # the default; a run sets its own
    concurrency: int = 80  # the default requests an instance takes at once; at most 1,000
    request_timeout_s: float = 300.0  # the default; at most 3,600


@dataclass(frozen=True, slots=True)
class Limit:
    system: str
    name: str
    value: str
    enforced: str
    source: str


LIMITS: tuple[Limit, ...] = (
    Limit(
        "Firestore",
        "Sustained writes to one document",
        "1 a second; short bursts above it pass",
        "a token bucket per document (1/s, a burst of 10): a write past it is ABORTED "
        '("too much contention"), and the adapter\'s retries run on the simulated clock',
        f"{FIRESTORE_QUOTAS} (Writes and transactions); {FIRESTORE_ERRORS} (ABORTED)",
    ),
    Limit(
        "Firestore",
        "Writes in one commit or transaction",
        "500",
        "a commit of more is refused (INVALID_ARGUMENT)",
        f"{FIRESTORE_QUOTAS} (Writes and transactions)",
    ),
    Limit(
        "Firestore",
        "Size of a document",
        "1 MiB (1,048,576 bytes)",
        "a larger document is refused (INVALID_ARGUMENT)",
        f"{FIRESTORE_QUOTAS} (Documents)",
    ),
    Limit(
        "Firestore",
        "Traffic to a new collection (the 500/50/5 rule)",
        "start at 500 operations a second, grow by 50% every 5 minutes",
        "per collection from its first write, a root collection (jobs, hosts, tasks) taken as "
        "ramped (the deployment has run a while), a new job's subcollections as new; "
        "operations past it are ABORTED and counted",
        f"{FIRESTORE_PRACTICES} (Ramping up traffic)",
    ),
    Limit(
        "Firestore",
        "Sequential values in an indexed field or id",
        "about 500 writes a second to a collection",
        "not modelled: key ranges are not; job, batch and task ids are random, but the "
        "usage meter's ids begin with their 5-minute slot (docs/scale.md)",
        f"{FIRESTORE_PRACTICES} (Hotspots)",
    ),
    Limit(
        "Pub/Sub push",
        "Push requests in flight (the push window)",
        "slow start from a single-digit window, up on success, down on failure",
        "a window per subscription: +1 per success, halved per failure, from 3 to 3,000",
        f"{PUBSUB_PUSH} (Push backoff, Delivery rate)",
    ),
    Limit(
        "Pub/Sub push",
        "Ack deadline",
        "10 to 600 s; for push, the request's timeout",
        "a push unanswered at the deadline is delivered again while the first runs on",
        f"{PUBSUB_PUSH} (Receive messages); {PUBSUB_QUOTAS}",
    ),
    Limit(
        "Cloud Run",
        "Requests an instance serves at once",
        "80 by default, at most 1,000",
        "a push finds an instance with a free place, else waits for one",
        RUN_CONCURRENCY,
    ),
    Limit(
        "Cloud Run",
        "Instances of a service",
        "100 by default (a setting)",
        "the simulation's instance count",
        RUN_INSTANCES,
    ),
    Limit(
        "Cloud Run",
        "CPU of an instance",
        "1 vCPU by default (the worker's `worker_cpu`)",
        f"in the growth runs (--scaling), each page costs its instance {PAGE_CPU_S * 1000:g} ms "
        "of its one vCPU (make bench: 3 to 5 ms), pages in turn (instance_cpu.py); the "
        "workloads' runs charge no CPU",
        RUN_CPU,
    ),
    Limit(
        "Cloud Run",
        "Request timeout",
        "5 minutes by default, at most 60",
        "a request past it is answered 504 (a nack) while its work runs on",
        RUN_TIMEOUT,
    ),
)
