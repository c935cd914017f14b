"""The extraction processes' own limits and messages, without starting a process."""

from __future__ import annotations

import multiprocessing
import resource

import pytest

from scrapejobs_shared.ports.fetcher import FetchResponse
from scrapejobs_shared.processes import limits as process_limits
from scrapejobs_shared.processes.pipes import put, take


def test_the_cpu_limit_is_set_again_only_when_its_whole_second_moves(monkeypatch) -> None:
    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(
        process_limits.resource, "setrlimit", lambda kind, limits: calls.append(limits)
    )
    used = [10.2]
    monkeypatch.setattr(process_limits.time, "process_time", lambda: used[0])
    first = process_limits.limit_cpu(2.0)
    assert first == 13  # 10.2 s used + 2 s, rounded up
    assert calls == [(first, resource.RLIM_INFINITY)]
    # the next page in the same whole second: the limit in force is already the right one
    used[0] = 10.7
    assert process_limits.limit_cpu(2.0, first) == first
    assert len(calls) == 1
    # a process that used more CPU since: a later limit, set
    used[0] = 11.1
    later = process_limits.limit_cpu(2.0, first)
    assert later == 14
    assert calls[-1] == (later, resource.RLIM_INFINITY)


def test_a_message_crosses_a_pipe_whole() -> None:
    ours, theirs = multiprocessing.get_context("forkserver").Pipe(duplex=True)
    page = FetchResponse("http://127.0.0.1/p", 200, {"content-type": "text/html"}, b"<p>x</p>", 3)
    try:
        put(ours, [(7, None, page)])
        assert take(theirs) == [(7, None, page)]
        put(theirs, [(True, "answer")])
        assert take(ours) == [(True, "answer")]
        ours.close()
        with pytest.raises(EOFError):
            take(theirs)
    finally:
        theirs.close()
