"""The deadlines given to every Firestore call and every publish, and what an outage becomes."""

from __future__ import annotations

import pytest
from google.api_core import exceptions as gexc

from scrapejobs_shared.adapters.firestore import store_base
from scrapejobs_shared.adapters.firestore.call_deadline import CallDeadline, reports_outages
from scrapejobs_shared.adapters.firestore.store_base import Stale, guarded_rounds, in_transaction
from scrapejobs_shared.adapters.pubsub.call_deadline import PublishDeadline
from scrapejobs_shared.ports.dependency_unavailable import Contended, DependencyUnavailable


def test_a_firestore_call_gets_a_timeout_and_a_retry_that_stops_within_it() -> None:
    call = CallDeadline(2.5).call
    assert call["timeout"] == 2.5
    assert call["retry"].timeout == 2.5  # the retry gives up within the same deadline
    with pytest.raises(ValueError):
        CallDeadline(0)


class Adapter:
    def __init__(self, error: BaseException) -> None:
        self._deadline = CallDeadline(3)
        self._error = error

    async def read(self) -> None:
        raise self._error

    async def _private(self) -> None:
        raise self._error


async def test_an_adapter_reports_an_outage_naming_firestore_and_its_deadline() -> None:
    adapter = reports_outages(Adapter)(gexc.DeadlineExceeded("slow"))
    with pytest.raises(DependencyUnavailable) as raised:
        await adapter.read()
    assert str(raised.value) == "Firestore did not answer within 3 s"
    assert isinstance(raised.value.__cause__, gexc.DeadlineExceeded)
    with pytest.raises(gexc.DeadlineExceeded):
        await adapter._private()  # only the public methods translate


async def test_other_errors_pass_through_unchanged() -> None:
    adapter = reports_outages(Adapter)(gexc.AlreadyExists("there"))
    with pytest.raises(gexc.AlreadyExists):
        await adapter.read()


async def test_a_write_refused_for_contention_is_contended_a_503_that_says_so() -> None:
    adapter = reports_outages(Adapter)(gexc.Aborted("Too much contention on these entities"))
    with pytest.raises(Contended) as raised:
        await adapter.read()
    assert str(raised.value) == "Firestore refused a write to a busy document"
    assert raised.value.status == 503 and raised.value.headers() == {"Retry-After": "1"}
    assert raised.value.details() == {"dependency": "Firestore", "reason": "contention"}


class AlwaysAborted:
    """A client whose transactions abort every time, as the library reports it after its own
    attempts (``ValueError`` from ``Aborted``)."""

    def __init__(self) -> None:
        self.transactions = 0

    def transaction(self, max_attempts: int) -> int:
        self.transactions += 1
        return max_attempts


def paused(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The pauses the store's rounds take, recorded instead of slept."""
    pauses: list[float] = []

    async def pause(seconds: float) -> None:
        pauses.append(seconds)

    monkeypatch.setattr(store_base.asyncio, "sleep", pause)
    return pauses


async def test_a_transaction_that_keeps_aborting_ends_contended_after_growing_pauses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pauses = paused(monkeypatch)
    monkeypatch.setattr(store_base.random, "uniform", lambda low, high: high)
    client = AlwaysAborted()

    async def run(attempts: int) -> None:
        raise ValueError(f"Failed to commit transaction in {attempts} attempts.") from (
            gexc.Aborted("lock timeout")
        )

    with pytest.raises(Contended):
        await in_transaction(client, run)  # type: ignore[arg-type]
    assert client.transactions == store_base.TRANSACTION_ROUNDS
    assert pauses[:4] == [0.1, 0.2, 0.4, 0.8]  # the longest pause doubles each round ...
    assert max(pauses) == store_base.TRANSACTION_PAUSE_CAP_S  # ... up to a cap


async def test_a_transaction_failing_otherwise_is_not_retried() -> None:
    client = AlwaysAborted()

    async def run(attempts: int) -> None:
        raise ValueError("a bug")

    with pytest.raises(ValueError, match="a bug"):
        await in_transaction(client, run)  # type: ignore[arg-type]
    assert client.transactions == 1


def test_a_publish_outage_is_named_and_other_errors_are_kept() -> None:
    deadline = PublishDeadline(4)
    assert deadline.call["timeout"] == 4 and deadline.call["retry"].timeout == 4
    outage = deadline.outage_of(gexc.RetryError("gave up", gexc.DeadlineExceeded("x")))
    assert isinstance(outage, DependencyUnavailable) and outage.dependency == "Pub/Sub"
    refused = gexc.InvalidArgument("too large")
    assert deadline.outage_of(refused) is refused


async def test_a_guarded_commit_found_stale_reads_again_and_ends_contended_if_always_stale(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pauses = paused(monkeypatch)
    attempts: list[int] = []

    async def stale_twice() -> str:
        attempts.append(1)
        if len(attempts) < 3:
            raise Stale
        return "committed"

    assert await guarded_rounds(stale_twice) == "committed" and len(attempts) == 3
    assert len(pauses) == 2  # a random pause before each new round

    async def always_stale() -> str:
        raise Stale

    with pytest.raises(Contended):
        await guarded_rounds(always_stale)

    async def a_bug() -> str:
        raise ValueError("a bug")

    with pytest.raises(ValueError, match="a bug"):  # anything else is not retried
        await guarded_rounds(a_bug)
