"""The files a job's pages made (screenshots, actions' screenshots and PDFs), as the API serves
them to the job's tenant for its retention. Mixed into ``Client``, whose ``_send`` it uses."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote, urlsplit

import httpx

from scrapejobs_client.paths import segment


class FilesApi:
    _send: Callable[..., httpx.Response]  # Client's: send with retries, raise non-2xx

    def get_file(self, job_id: str, task_id: str, name: str) -> bytes:
        """A file a job's page made (its screenshot, an action's screenshot or PDF), for the
        job's retention: ``GET /v1/jobs/{id}/files/{task}/{name}``."""
        path = f"/v1/jobs/{segment(job_id)}/files/{segment(task_id)}/{segment(name)}"
        return self._send("GET", path, headers={"Accept": "*/*"}).content

    def download(self, file_url: str) -> bytes:
        """The file a result's URL names (``screenshot``, ``actions.screenshots``...), asked of
        this client's API whatever host the URL names: the key is never sent elsewhere."""
        parts = urlsplit(file_url).path.split("/")
        if len(parts) != 7 or parts[1:3] != ["v1", "jobs"] or parts[4] != "files":
            raise ValueError(f"not a job's file URL: {file_url!r}")
        job_id, task_id, name = (unquote(part) for part in (parts[3], parts[5], parts[6]))
        return self.get_file(job_id, task_id, name)
