"""A multipart/form-data request's ``file`` part and one JSON field, read with the size limit
checked first: the declared length before anything is read, the file's own size after the
parser spooled it (to disk past 1 MiB), before it is read whole into memory."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException

from scrapejobs_dispatcher.edge.unicode_body import MESSAGE, unencodable_field
from scrapejobs_dispatcher.uploads.upload import (
    Upload,
    UploadTooLarge,
    accepted_extensions,
    clean_filename,
)
from scrapejobs_shared.errors import InvalidInput

MULTIPART_ROOM = 64 * 1024  # what a request may hold besides its file (boundaries, options)


def upload_form_schema(json_field: str, json_description: str) -> dict[str, Any]:
    """The OpenAPI ``requestBody`` of an upload (``openapi_extra``): a ``file`` part and a JSON
    part named ``json_field``, and no other."""
    file_description = (
        "The file: "
        + ", ".join(accepted_extensions())
        + " (its type by its content, else its part's Content-Type, else its extension); at "
        "most SCRAPEJOBS_MAX_UPLOAD_BYTES"
    )
    properties = {
        "file": {"type": "string", "format": "binary", "description": file_description},
        json_field: {
            "type": "string",
            "description": f"JSON: {json_description}",
            "contentMediaType": "application/json",
        },
    }
    schema = {
        "type": "object",
        "required": ["file"],
        "additionalProperties": False,
        "properties": properties,
    }
    return {
        "requestBody": {"required": True, "content": {"multipart/form-data": {"schema": schema}}}
    }


@dataclass(frozen=True, slots=True)
class UploadForm:
    upload: Upload
    options: Any  # the JSON field, parsed (None: absent)


async def read_upload_form(request: Request, options_field: str, max_bytes: int) -> UploadForm:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes + MULTIPART_ROOM:
        raise UploadTooLarge(None, max_bytes)
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise InvalidInput("send the file as multipart/form-data (a 'file' part)", "file")
    try:
        form = await request.form(max_files=1, max_fields=4, max_part_size=MULTIPART_ROOM)
    except MultiPartException as exc:
        raise InvalidInput(f"the multipart body cannot be read: {exc.message}", "file") from None
    try:
        unknown = sorted(set(form.keys()) - {"file", options_field})
        if unknown:
            raise InvalidInput(f"unknown field {unknown[0]!r}", unknown[0])
        part = form.get("file")
        if not isinstance(part, UploadFile):
            raise InvalidInput("the 'file' part is missing: send the file as 'file'", "file")
        if part.size is not None and part.size > max_bytes:
            raise UploadTooLarge(part.size, max_bytes)
        data = await part.read()
        raw_options = form.get(options_field)
        upload = Upload(clean_filename(part.filename), part.content_type, data)
    finally:
        await form.close()
    return UploadForm(upload, _json(raw_options, options_field))


def _json(raw: object, field: str) -> Any:
    if raw is None or raw == "":
        return None
    if not isinstance(raw, str):
        raise InvalidInput(f"'{field}' is a JSON text field, not a file", field)
    where = unencodable_field(raw.encode("utf-8", "surrogatepass"))
    if where is not None:
        path = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in where)
        raise InvalidInput(f"{field}{path}: {MESSAGE}", f"{field}{path}")
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise InvalidInput(f"'{field}' is not JSON: {exc}", field) from None
