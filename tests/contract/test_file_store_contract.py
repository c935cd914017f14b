"""The FileStore contract on the memory twin and the Cloud Storage emulator."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from scrapejobs_shared.adapters.cloud_storage.file_store import (
    CloudStorageFileStore,
    storage_client,
)
from scrapejobs_shared.adapters.memory.file_store import MemoryFileStore
from scrapejobs_shared.ports.file_store import FileStore, StoredFile, file_key

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40  # binary, every byte value


@pytest.fixture(params=["memory", pytest.param("cloud_storage", marks=pytest.mark.emulators)])
async def files(request: pytest.FixtureRequest) -> AsyncIterator[FileStore]:
    if request.param == "memory":
        yield MemoryFileStore()
        return
    stack = request.getfixturevalue("stack")
    yield CloudStorageFileStore(storage_client(stack.config.project_id), stack.config.files_bucket)


def key(name: str = "screenshot.png") -> str:
    return file_key("tenant-a", uuid.uuid4().hex, "task-1", name)


async def test_a_file_is_kept_until_it_expires(files: FileStore) -> None:
    now = datetime.now(UTC)
    kept = key()
    await files.put(kept, PNG, "image/png", now + timedelta(days=1))
    assert await files.get(kept, now) == StoredFile(PNG, "image/png")
    assert await files.get(kept, now + timedelta(days=2)) is None  # expired: never served
    assert await files.get(key(), now) is None  # never written


async def test_a_file_written_again_is_replaced(files: FileStore) -> None:
    now = datetime.now(UTC)
    kept = key("page.pdf")
    await files.put(kept, b"%PDF-1.4 first", "application/pdf", now + timedelta(hours=1))
    await files.put(kept, b"%PDF-1.4 again", "application/pdf", now + timedelta(days=3))
    assert await files.get(kept, now + timedelta(days=2)) == StoredFile(
        b"%PDF-1.4 again", "application/pdf"
    )


def test_keys_are_tenant_job_task_and_a_plain_file_name() -> None:
    assert file_key("t", "j", "k", "screenshot-2.jpeg") == "t/j/k/screenshot-2.jpeg"
    for bad in ("../x.png", "a/b.png", "x.exe", "", "Screenshot.png", "x.png/"):
        with pytest.raises(ValueError, match="not a file name"):
            file_key("t", "j", "k", bad)
