"""The upload call of the API client: a local file read by the service (``POST /v1/parse``).
Mixed into ``Client``, whose ``_send`` it uses."""

from __future__ import annotations

import json
import mimetypes
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx

from scrapejobs_client.models import Scraped

PARSE_WAIT_S = 120.0  # an upload's HTTP timeout: its read waits its turn, within its CPU budget


class UploadsApi:
    _send: Callable[..., httpx.Response]  # Client's: send with retries, raise non-2xx

    def parse(
        self,
        file: str | Path | bytes,
        *,
        filename: str | None = None,
        content_type: str | None = None,
        request: Mapping[str, Any] | None = None,
        formats: Sequence[str | Mapping[str, Any]] | None = None,
        documents: Mapping[str, Any] | None = None,
    ) -> Scraped:
        """``POST /v1/parse``: an uploaded file (a path, or its bytes with ``filename``) read
        and answered with its result, kept as a finished one-page job. ``request``: what to
        read of it, as a job asks of a page (``formats`` and ``documents`` go into its
        options). Never retried: each upload is a job of its own."""
        if isinstance(file, bytes):
            data, name = file, filename or "upload"
        else:
            path = Path(file)
            data, name = path.read_bytes(), filename or path.name
        body: dict[str, Any] = dict(request or {})
        wanted = {"formats": list(formats) if formats else None, "documents": documents}
        if any(v is not None for v in wanted.values()):
            options = dict(body.get("options") or {})
            options |= {k: v for k, v in wanted.items() if v is not None}
            body["options"] = options
        kind = content_type or mimetypes.guess_type(name)[0] or "application/octet-stream"
        response = self._send(
            "POST",
            "/v1/parse",
            files={"file": (name, data, kind)},
            data={"request": json.dumps(body)} if body else {},
            timeout_s=PARSE_WAIT_S,
            retries=False,
        )
        return Scraped.model_validate(response.json())
