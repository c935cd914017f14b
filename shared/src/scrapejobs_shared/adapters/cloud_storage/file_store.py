"""The FileStore on a Cloud Storage bucket: each file an object under its key, its expiry the
object's ``customTime`` (the bucket's lifecycle rule deletes an object once that time has
passed: Terraform, ``files.tf``; until then a read checks it, so an expired file is never
served). The client library is synchronous: its calls run on a thread, each within
``timeout_s``; a call that fails for want of an answer is ``DependencyUnavailable``.

Locally, ``STORAGE_EMULATOR_HOST`` points the library at the storage emulator (``make dev``
starts one), without credentials."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TypeVar

from google.api_core import exceptions as gexc
from google.auth.credentials import AnonymousCredentials
from google.cloud import storage

from scrapejobs_shared.ports.dependency_unavailable import CLOUD_STORAGE, DependencyUnavailable
from scrapejobs_shared.ports.file_store import StoredFile

T = TypeVar("T")
EMULATOR_HOST = "STORAGE_EMULATOR_HOST"
# what a call may meet when the service does not answer (or refuses for now)
_OUTAGES = (
    gexc.ServiceUnavailable,
    gexc.TooManyRequests,
    gexc.InternalServerError,
    gexc.GatewayTimeout,
    gexc.DeadlineExceeded,
    ConnectionError,
    TimeoutError,
)


def storage_client(project_id: str) -> storage.Client:
    """A client of the real service, or of the emulator ``STORAGE_EMULATOR_HOST`` names."""
    host = os.environ.get(EMULATOR_HOST)
    if host:
        endpoint = host if host.startswith("http") else f"http://{host}"
        return storage.Client(
            project=project_id,
            credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
            client_options={"api_endpoint": endpoint},
        )
    return storage.Client(project=project_id)


class CloudStorageFileStore:
    def __init__(self, client: storage.Client, bucket: str, timeout_s: float = 30.0) -> None:
        self._bucket = client.bucket(bucket)
        self._timeout_s = timeout_s

    async def put(self, key: str, body: bytes, content_type: str, expire_at: datetime) -> None:
        def upload() -> None:
            blob = self._bucket.blob(key)
            blob.custom_time = expire_at
            blob.upload_from_string(body, content_type=content_type, timeout=self._timeout_s)

        await self._call(upload)

    async def get(self, key: str, now: datetime) -> StoredFile | None:
        def download() -> StoredFile | None:
            blob = self._bucket.get_blob(key, timeout=self._timeout_s)
            if blob is None or _expired(blob.custom_time, now):
                return None
            try:
                body = blob.download_as_bytes(timeout=self._timeout_s)
            except gexc.NotFound:  # deleted between the two calls
                return None
            return StoredFile(body, blob.content_type or "application/octet-stream")

        return await self._call(download)

    async def _call(self, work: Callable[[], T]) -> T:
        try:
            return await asyncio.to_thread(work)
        except _OUTAGES as exc:
            raise DependencyUnavailable(CLOUD_STORAGE, self._timeout_s) from exc


def _expired(custom_time: datetime | None, now: datetime) -> bool:
    if custom_time is None:
        return False  # written without an expiry: kept (the lifecycle's age rule ends it)
    if custom_time.tzinfo is None:
        custom_time = custom_time.replace(tzinfo=UTC)
    return custom_time <= now
