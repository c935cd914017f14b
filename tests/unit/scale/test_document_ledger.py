"""The limits model, one test per Firestore limit: each refusal is the error the client
library raises for it (``Aborted`` for contention and the ramp, ``InvalidArgument`` for a
commit too large or a document too big), and a refused commit charges nothing."""

from __future__ import annotations

import pytest
from google.api_core import exceptions as gexc

from scrapejobs_scale.busiest import busiest
from scrapejobs_scale.document_ledger import CONTENTION, DocumentLedger, collection_of
from scrapejobs_scale.limits import LIMITS, FirestoreLimits


def test_a_document_takes_its_burst_then_one_write_a_second() -> None:
    ledger = DocumentLedger()
    for _ in range(10):
        ledger.commit(["jobs/j1"], at=0.0)
    with pytest.raises(gexc.Aborted) as refused:
        ledger.commit(["jobs/j1"], at=0.5)
    assert refused.value.message == CONTENTION
    ledger.commit(["jobs/j2"], at=0.5)  # another document is not held back
    ledger.commit(["jobs/j1"], at=1.0)  # a second later, one more
    with pytest.raises(gexc.Aborted):
        ledger.commit(["jobs/j1"], at=1.5)
    report = ledger.report()
    assert report.refused_contention == 2 and report.contended == (("jobs/j1", 2),)
    assert report.writes == 12 and report.commits == 12


def test_a_refused_commit_writes_none_of_its_documents() -> None:
    ledger = DocumentLedger(FirestoreLimits(burst_writes_per_doc=1))
    ledger.commit(["hot"], at=0.0)
    with pytest.raises(gexc.Aborted):
        ledger.commit(["cold", "hot"], at=0.1)
    assert ledger.report().writes == 1
    ledger.commit(["cold"], at=0.1)  # its token was not spent by the refused commit


def test_a_commit_holds_at_most_500_writes() -> None:
    ledger = DocumentLedger()
    ledger.commit([f"tasks/{n}" for n in range(500)], at=0.0)
    with pytest.raises(gexc.InvalidArgument, match="500 writes"):
        ledger.commit([f"tasks/{n}" for n in range(501)], at=400.0)


def test_a_document_is_at_most_one_mebibyte() -> None:
    ledger = DocumentLedger()
    ledger.commit(["results/r1"], at=0.0, sizes=[1_048_576])
    with pytest.raises(gexc.InvalidArgument, match="maximum size"):
        ledger.commit(["results/r2"], at=0.0, sizes=[1_048_577])
    assert ledger.report().refused_size == 1


def test_a_new_collection_ramps_500_50_5() -> None:
    ledger = DocumentLedger()
    for n in range(500):
        ledger.commit([f"jobs/j/batches/{n}"], at=10.0)
    with pytest.raises(gexc.Aborted):
        ledger.commit(["jobs/j/batches/late"], at=10.5)
    ledger.commit(["jobs/other/batches/1"], at=10.5)  # another job's batches: its own range
    assert ledger.allowed_ops_s(opened=10.0, at=10.0 + 300) == 750
    for n in range(750):
        ledger.commit([f"jobs/j/batches/b{n}"], at=310.0)
    assert ledger.report().refused_ramp == 1
    assert (
        collection_of("jobs/j/batches/1") == "jobs/j/batches"
        and collection_of("hosts/h") == "hosts"
    )
    for n in range(2_000):  # a root collection (every job's results): warm already
        ledger.commit([f"tasks/{n}"], at=10.0)
    assert ledger.report().refused_ramp == 1


def test_the_report_gives_each_documents_busiest_ten_seconds() -> None:
    ledger = DocumentLedger()
    for second in range(120):
        ledger.commit(["steady"], at=float(second))
        if second < 30:
            ledger.commit([f"cold/{second}"], at=float(second))
    report = ledger.report()
    assert report.hottest[0].path == "steady" and report.hottest[0].peak_per_s == 1.0
    assert report.over_sustained == () and report.documents == 31


def test_every_limit_says_where_google_states_it() -> None:
    assert {limit.system for limit in LIMITS} == {"Firestore", "Pub/Sub push", "Cloud Run"}
    assert all(limit.source.startswith("https://cloud.google.com/") for limit in LIMITS)


def test_the_busiest_window_is_a_sliding_sum() -> None:
    counts = {0: 3, 1: 1, 5: 4, 6: 4, 20: 9}
    assert busiest(counts, 1) == 9
    assert busiest(counts, 2) == 9 and busiest(counts, 7) == 12
    assert busiest({}, 5) == 0
