"""REST resource: /v1/parse, an uploaded file read and answered (and kept as a job)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from pydantic import ValidationError

from scrapejobs_dispatcher.dependencies import UploadsDep
from scrapejobs_dispatcher.jobs.views import ScrapeResponse
from scrapejobs_dispatcher.routes.native_router import error_responses
from scrapejobs_dispatcher.tenants.authentication import CallerDep, require_caller
from scrapejobs_dispatcher.uploads.multipart_upload import read_upload_form, upload_form_schema
from scrapejobs_shared.domain.jobspec import PageRequest
from scrapejobs_shared.errors import InvalidInput, first_problem

router = APIRouter(prefix="/v1/parse", tags=["parse"], dependencies=[Depends(require_caller)])
ERRORS = error_responses(400, 401, 403, 413, 422, 429, 500)
REQUEST_SCHEMA = upload_form_schema(
    "request",
    "what to read of it, as a job asks of each page (extract, options.formats, "
    "options.content, options.documents, options.retention_days, pipeline without an ai "
    "stage, labels); default: markdown and metadata",
)
DEFAULT_REQUEST = {"options": {"formats": ["markdown", "metadata"]}}


@router.post("", response_model=ScrapeResponse, responses=ERRORS, openapi_extra=REQUEST_SCHEMA)
async def parse(request: Request, uploads: UploadsDep, caller: CallerDep) -> ScrapeResponse:
    """Read an uploaded file (PDF, Word, Excel, PowerPoint, OpenDocument, RTF, EPUB, HTML)
    into markdown, text, metadata and the rest a job asks of a page, in a process of its own
    within a CPU and memory budget. The answer is its result, kept as a finished one-page job
    (``job_id``: its results, export and deletion as any job's; labelled ``upload``)."""
    with uploads.holding(caller.tenant):  # before its body is read
        form = await read_upload_form(request, "request", uploads.limits.max_bytes)
        scraped = await uploads.parse(form.upload, page_request(form.options), caller.tenant)
    return ScrapeResponse.of(scraped.job, scraped.result)


def page_request(given: Any) -> PageRequest:
    """What the ``request`` part asks (its JSON; None: markdown and metadata), or a 422
    naming the field at fault."""
    try:
        return PageRequest.model_validate(DEFAULT_REQUEST if given is None else given, strict=False)
    except ValidationError as exc:
        field, problem = first_problem(exc.errors(), under="request")
        raise InvalidInput(f"{field}: {problem}", field) from None
