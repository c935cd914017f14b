"""Files a page produced in the browser (screenshots, the page printed to PDF), kept per tenant
and job until the job expires: written by the worker that rendered the page, read back by the
dispatcher for the job's tenant only. Keys are ``{tenant}/{job}/{task}/{name}``
(:func:`file_key`): a file is another tenant's by its key's first part, and a task rendered
again writes the same keys (a redelivery replaces its files, never adds to them)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

FILE_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,62}\.(png|jpeg|pdf)")  # screenshot-1.png, page.pdf


@dataclass(frozen=True, slots=True)
class StoredFile:
    body: bytes
    content_type: str


def file_key(tenant: str, job_id: str, task_id: str, name: str) -> str:
    """Where a task's file is kept; ``name`` must match :data:`FILE_NAME`."""
    if FILE_NAME.fullmatch(name) is None:
        raise ValueError(f"not a file name: {name!r}")
    return f"{tenant}/{job_id}/{task_id}/{name}"


class FileStore(Protocol):
    async def put(self, key: str, body: bytes, content_type: str, expire_at: datetime) -> None:
        """Keep ``body`` under ``key`` until ``expire_at`` (written again: replaced)."""

    async def get(self, key: str, now: datetime) -> StoredFile | None:
        """The file kept under ``key``; None when there is none, or it expired by ``now``
        (the store deletes expired files in its own time: they are never served)."""
