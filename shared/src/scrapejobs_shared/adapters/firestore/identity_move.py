"""The dispatcher's identities (``api_keys``, ``revoked_sessions``) move once from the main
database, where releases before the identity database kept them, to the identity database only
the dispatcher may use.

Run at each dispatcher start; after the first complete move one read of its marker
(``identity_moves/{source database}``) is all it costs. Documents are copied with ``create``,
so a key revoked (or a session signed out) in the identity database meanwhile is never
overwritten by its older copy, and several instances starting at once copy the same documents
harmlessly; each original is deleted once copied, so none lingers where the worker could read
or write it.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from google.api_core import exceptions as gexc

from scrapejobs_shared.adapters.firestore.api_keys import COLLECTION as API_KEYS
from scrapejobs_shared.adapters.firestore.call_deadline import CallDeadline, reports_outages
from scrapejobs_shared.adapters.firestore.session_revocations import (
    COLLECTION as REVOKED_SESSIONS,
)
from scrapejobs_shared.observability.store_ops import count

IDENTITY_COLLECTIONS = (API_KEYS, REVOKED_SESSIONS)
MARKERS = "identity_moves"

log = logging.getLogger(__name__)


@reports_outages
class IdentityMove:
    def __init__(self, source: Any, target: Any, deadline: CallDeadline | None = None) -> None:
        self._source = source
        self._target = target
        self._deadline = deadline or CallDeadline()

    async def run(self, source_database: str) -> int:
        """Move what ``source_database`` (the source client's) still holds; the number of
        documents moved. The two clients must be of different databases."""
        marker = self._target.collection(MARKERS).document(_marker_id(source_database))
        count(reads=1)
        if (await marker.get(**self._deadline.call)).exists:
            return 0
        moved = 0
        for name in IDENTITY_COLLECTIONS:
            moved += await self._move(name)
        count(writes=1)
        await marker.set({"moved": moved}, **self._deadline.call)
        if moved:
            log.info(
                "identities moved to their own database",
                extra={"moved": moved, "source_database": source_database},
            )
        return moved

    async def _move(self, name: str) -> int:
        moved = 0
        async for snap in self._source.collection(name).stream(**self._deadline.call):
            count(reads=1, writes=2)
            with contextlib.suppress(gexc.AlreadyExists):  # newer there: keep it
                await (
                    self._target.collection(name)
                    .document(snap.id)
                    .create(snap.to_dict() or {}, **self._deadline.call)
                )
            await snap.reference.delete(**self._deadline.call)
            moved += 1
        return moved


def _marker_id(database: str) -> str:
    return database.strip("()") or "default"
