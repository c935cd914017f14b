"""Every document under a Firestore reference, with its update time: what a call wrote is
what changed between two reads of the tree (tests/contract's layout contracts)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any


async def document_tree(ref: Any) -> dict[str, Any]:
    """``ref`` (if it exists) and every document of its subcollections, by path."""
    found: dict[str, Any] = {}
    snap = await ref.get()
    if snap.exists:
        found[ref.path] = snap.update_time
    async for collection in ref.collections():
        async for child in collection.list_documents():
            found |= await document_tree(child)
    return found


async def changed_by(
    read: Callable[[], Awaitable[dict[str, Any]]], call: Callable[[], Awaitable[Any]]
) -> tuple[set[str], Any]:
    """The documents ``call`` created, changed or deleted (``read`` gives them before and
    after), and its answer."""
    before = await read()
    answer = await call()
    after = await read()
    return {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}, answer
