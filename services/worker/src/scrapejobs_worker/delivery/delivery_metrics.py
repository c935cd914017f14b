"""The worker's metrics, per the OpenTelemetry messaging semantic conventions.

* ``messaging.process.duration`` (histogram, ``s``): one observation per push delivery (a
  batch), with ``messaging.system`` = ``gcp_pubsub``, ``messaging.operation.name`` =
  ``process``, ``messaging.destination.subscription.name`` (the subscription's short name),
  and ``error.type`` when the delivery did not succeed: a nack (``busy``,
  ``republish_failed``, ``transient_task_failure``), an exception (its class name), or a
  malformed message (``malformed_message``, recorded and acked).
* ``scrapejobs.tasks`` (counter, ``{task}``): tasks by ``scrapejobs.task.outcome``
  (``succeeded``, ``failed``, ``dead_lettered``, ``cancelled``, ``retry``, ``deferred``), with
  the two messaging attributes and, for ``failed``, ``dead_lettered`` and ``retry``,
  ``error.type``: the reason code the task's error starts with (``http_404``, ``timeout``,
  ``blocked_destination``, ``robots_disallowed``, ``max_attempts``...), ``_OTHER`` when it has
  none.

Attribute values are bounded sets (no URL, job or task id), as metric attributes must be.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from opentelemetry.metrics import Meter

from scrapejobs_shared.domain.batch_transitions import FinishTask, ReleaseTask
from scrapejobs_worker.tasks.task_runner import TaskResult

SYSTEM = "gcp_pubsub"
OTHER = "_OTHER"  # the conventions' fallback error.type
# A batch answers within the ack deadline (60 s by default; at most 600 s).
DURATION_BUCKETS_S = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 45, 60, 120, 300, 600)
_CODE = re.compile(r"[a-z][a-z0-9_]*")
_HTTP = re.compile(r"HTTP (\d{3})")
_OUTCOMES = {"defer": "deferred"}  # TaskResult.outcome → scrapejobs.task.outcome
_WITH_ERROR = frozenset({"failed", "dead_lettered", "retry"})


def error_type(error: str | None) -> str:
    """A task error's reason code: ``HTTP 404`` → ``http_404``; ``timeout: ...`` →
    ``timeout``; anything without a code → ``_OTHER``."""
    if not error:
        return OTHER
    if (http := _HTTP.fullmatch(error.strip())) is not None:
        return f"http_{http.group(1)}"
    code = error.split(":", 1)[0].strip()
    return code if _CODE.fullmatch(code) else OTHER


def subscription_name(subscription: str, default: str) -> str:
    """``projects/p/subscriptions/scrape-tasks-push`` → ``scrape-tasks-push``."""
    name = subscription.rsplit("/", 1)[-1]
    return name or default


class DeliveryMetrics:
    """Records deliveries and task outcomes; over the API's no-op meter it costs nothing."""

    def __init__(self, meter: Meter, default_subscription: str) -> None:
        self._default = default_subscription
        self._duration = meter.create_histogram(
            "messaging.process.duration",
            unit="s",
            description="Duration of processing a push delivery (one batch of tasks)",
            explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS_S),
        )
        self._tasks = meter.create_counter(
            "scrapejobs.tasks", unit="{task}", description="Tasks processed, by outcome"
        )

    def delivery(self, subscription: str, duration_s: float, error: str | None = None) -> None:
        """One processed delivery; ``error`` is its error.type when it did not succeed."""
        attributes = self._messaging(subscription) | {"messaging.operation.name": "process"}
        if error is not None:
            attributes["error.type"] = error
        self._duration.record(duration_s, attributes)

    def tasks(self, subscription: str, results: Iterable[TaskResult]) -> None:
        """The outcomes of a delivery's tasks (one add per distinct attribute set)."""
        counts = Counter(_task_attributes(result) for result in results)
        base = self._messaging(subscription)
        for (outcome, error), count in counts.items():
            attributes = base | {"scrapejobs.task.outcome": outcome}
            if error is not None:
                attributes["error.type"] = error
            self._tasks.add(count, attributes)

    def dead_lettered(self, subscription: str, count: int) -> None:
        """Tasks a dead-letter delivery closed (their last error is in the store)."""
        if count:
            attributes = self._messaging(subscription) | {
                "scrapejobs.task.outcome": "dead_lettered",
                "error.type": "max_delivery_attempts",
            }
            self._tasks.add(count, attributes)

    def _messaging(self, subscription: str) -> dict[str, str]:
        return {
            "messaging.system": SYSTEM,
            "messaging.destination.subscription.name": subscription_name(
                subscription, self._default
            ),
        }


def _task_attributes(result: TaskResult) -> tuple[str, str | None]:
    outcome = _OUTCOMES.get(result.outcome, result.outcome)
    if outcome not in _WITH_ERROR:
        return outcome, None
    change = result.change
    if isinstance(change, FinishTask):
        return outcome, error_type(change.outcome.error)
    if isinstance(change, ReleaseTask):
        return outcome, error_type(change.error)
    return outcome, None
