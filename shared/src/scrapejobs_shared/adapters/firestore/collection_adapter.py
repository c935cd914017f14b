"""What most Firestore adapters start from: the client, the top-level collection they keep
their documents in (the class's ``collection``) and the deadline of each call
(call_deadline.py)."""

from __future__ import annotations

from typing import Any, ClassVar

from scrapejobs_shared.adapters.firestore.call_deadline import CallDeadline


class CollectionAdapter:
    collection: ClassVar[str]

    def __init__(self, client: Any, deadline: CallDeadline | None = None) -> None:
        self._client = client
        self._collection = client.collection(self.collection)
        self._deadline = deadline or CallDeadline()
