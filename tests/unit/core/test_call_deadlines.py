"""The deadlines given to every Firestore call and every publish, and what an outage becomes."""

from __future__ import annotations

import pytest
from google.api_core import exceptions as gexc

from scrapejobs_shared.adapters.firestore.call_deadline import CallDeadline, reports_outages
from scrapejobs_shared.adapters.pubsub.call_deadline import PublishDeadline
from scrapejobs_shared.ports.dependency_unavailable import DependencyUnavailable


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


def test_a_publish_outage_is_named_and_other_errors_are_kept() -> None:
    deadline = PublishDeadline(4)
    assert deadline.call["timeout"] == 4 and deadline.call["retry"].timeout == 4
    outage = deadline.outage_of(gexc.RetryError("gave up", gexc.DeadlineExceeded("x")))
    assert isinstance(outage, DependencyUnavailable) and outage.dependency == "Pub/Sub"
    refused = gexc.InvalidArgument("too large")
    assert deadline.outage_of(refused) is refused
