from __future__ import annotations

from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus

T = TaskStatus


def test_task_status_only_moves_forward() -> None:
    assert T.QUEUED.may_become(T.RUNNING) and T.QUEUED.may_become(T.CANCELLED)
    assert T.RUNNING.may_become(T.SUCCEEDED) and T.RUNNING.may_become(T.RUNNING)
    assert not T.RUNNING.may_become(T.QUEUED)
    for terminal in (T.SUCCEEDED, T.FAILED, T.DEAD_LETTERED, T.CANCELLED):
        assert terminal.terminal
        assert not any(terminal.may_become(other) for other in T)


def test_job_status_only_moves_forward() -> None:
    assert JobStatus.QUEUED.may_become(JobStatus.RUNNING)
    assert JobStatus.RUNNING.may_become(JobStatus.COMPLETED)
    assert JobStatus.QUEUED.may_become(JobStatus.CANCELLED)
    assert not JobStatus.RUNNING.may_become(JobStatus.QUEUED)
    assert not JobStatus.RUNNING.may_become(JobStatus.RUNNING)
    assert not JobStatus.COMPLETED.may_become(JobStatus.CANCELLED)
    assert not JobStatus.CANCELLED.may_become(JobStatus.COMPLETED)


def test_a_finish_with_an_open_status_changes_nothing() -> None:
    from datetime import UTC, datetime

    from scrapejobs_shared.domain.batch_transitions import FinishTask, claim, settle
    from scrapejobs_shared.domain.records import BatchItem, BatchRecord, TaskOutcome

    now = datetime(2026, 11, 22, tzinfo=UTC)
    batch = claim(BatchRecord("j", "b", (BatchItem("t", "http://a.example/"),), now, now), now)
    applied = settle(batch.batch, [FinishTask("t", TaskOutcome(TaskStatus.RUNNING))], now)
    assert applied.results == () and not applied.deltas
