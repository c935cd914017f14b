"""Which lane a push goes to: one table, read by the push route, written by the composition
root. A message names its lane in its ``lane`` attribute (the topic its publisher chose,
``messaging/topology.py``); lanes not in the table (``high``, ``normal``, ``low``, ``render``,
``documents``: all fetch batches) go to the default, the fetch lane."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from scrapejobs_shared.messaging.task_message import PushedMessage
from scrapejobs_shared.messaging.topology import LANE_ATTRIBUTE
from scrapejobs_worker.delivery.verdict import Verdict


class Lane(Protocol):
    async def handle_push(self, pushed: PushedMessage) -> Verdict: ...


@dataclass(frozen=True, slots=True)
class LaneTable:
    default: Lane
    by_lane: Mapping[str, Lane] = field(default_factory=dict)

    def lane_of(self, pushed: PushedMessage) -> Lane:
        return self.by_lane.get(pushed.attributes.get(LANE_ATTRIBUTE, ""), self.default)
