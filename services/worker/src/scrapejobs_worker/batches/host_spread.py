"""The order a batch's lanes take its tasks in, spread over the batch's hosts."""

from __future__ import annotations

import collections
from collections import Counter

from scrapejobs_shared.delivery.batching import authority
from scrapejobs_shared.domain.records import BatchItem


class HostSpread:
    """The order a batch's lanes take its tasks in: each host gets an equal part of the lanes
    (``concurrency // hosts``, at least one), fixed for the batch. A batch of one host runs
    all its lanes on it; a batch of many hosts runs one lane per host, so each host costs the
    shared gate one slot (a read and two writes) instead of one per lane."""

    def __init__(self, items: tuple[BatchItem, ...], concurrency: int) -> None:
        self._hosts: dict[str, collections.deque[BatchItem]] = {}
        for item in items:  # submission order within a host
            self._hosts.setdefault(authority(item.url), collections.deque()).append(item)
        self.per_host = max(1, concurrency // max(len(self._hosts), 1))
        spread = sum(min(len(queue), self.per_host) for queue in self._hosts.values())
        self.lanes = min(concurrency, spread)
        self._busy: Counter[str] = Counter()
        self._host_of: dict[str, str] = {}  # task id -> host

    def next(self) -> BatchItem | None:
        """The next task of the first host with a lane to spare; None when none has (the lane
        ends: the lanes still on a host finish its tasks)."""
        for host, queue in self._hosts.items():
            if self._busy[host] < self.per_host:
                item = queue.popleft()
                if not queue:
                    del self._hosts[host]
                self._busy[host] += 1
                self._host_of[item.task_id] = host
                return item
        return None

    def done(self, item: BatchItem) -> None:
        self._busy[self._host_of.pop(item.task_id)] -= 1
