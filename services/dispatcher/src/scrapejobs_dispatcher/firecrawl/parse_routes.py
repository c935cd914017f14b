"""Firecrawl's ``/v2/parse`` (a multipart ``file`` and its ``options``, a Document answered)
and ``GET /v2/parse/formats`` (what it reads), over the native uploads (uploads/)."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse
from pydantic import Field, ValidationError, model_validator

from scrapejobs_dispatcher.dependencies import UploadsDep
from scrapejobs_dispatcher.firecrawl.answer_models import Answer, ScrapeAnswer
from scrapejobs_dispatcher.firecrawl.errors import v2_router
from scrapejobs_dispatcher.firecrawl.format_translation import native_formats
from scrapejobs_dispatcher.firecrawl.request_models import ScrapeOptions
from scrapejobs_dispatcher.firecrawl.translation import validated
from scrapejobs_dispatcher.tenants.authentication import CallerDep
from scrapejobs_dispatcher.uploads.multipart_upload import read_upload_form, upload_form_schema
from scrapejobs_dispatcher.uploads.upload import HTML_EXTENSIONS, Upload
from scrapejobs_shared.domain.jobspec import PageRequest
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.errors import first_problem
from scrapejobs_shared.extraction.document_types import DOCUMENT_TYPES
from scrapejobs_shared.extraction.documents.ocr import installed_languages
from scrapejobs_shared.firecrawl.documents import document
from scrapejobs_shared.options import OPTIONS, InvalidOption, ServedHere

router = v2_router()
NOT_FOR_UPLOADS = ("changeTracking", "screenshot", "branding")


class ParseOptions(ScrapeOptions):
    """The ``options`` of ``/v2/parse``: scrape options that say how a file is read (formats,
    onlyMainContent, includeTags, excludeTags, parsers); fetch options (timeout, proxy,
    blockAds, maxAge...) are accepted and have nothing to do; a browser's (waitFor, mobile) and
    headers are refused."""

    @model_validator(mode="after")
    def _readable(self) -> ParseOptions:
        if self.headers:
            raise ValueError("an upload is not fetched: leave headers out")
        if (refused := OPTIONS.refused_on_uploads(self, "scrape_options")) is not None:
            raise ValueError(refused)
        for name in self.format_names():
            if name in NOT_FOR_UPLOADS:
                raise ValueError(f"the {name} format does not apply to an upload")
        return self


class ParseFormat(Answer):
    format: str
    kind: str = "document"
    extensions: list[str]
    mime_types: list[str] = Field(alias="mimeTypes")
    available: bool


class ParseFormats(Answer):
    formats: list[ParseFormat]
    ocr_languages: list[str] = Field(
        alias="ocrLanguages",
        description="The languages scans and images are read in by OCR here (Tesseract's "
        "names: options.documents.ocr_languages); empty: OCR is not installed",
    )


class ParseFormatsAnswer(Answer):
    success: bool = True
    data: ParseFormats


@router.post(
    "/parse",
    response_model=ScrapeAnswer,
    response_model_by_alias=True,
    openapi_extra=upload_form_schema(
        "options", "scrape options (formats, onlyMainContent, includeTags, excludeTags, parsers)"
    ),
)
async def parse(
    request: Request, uploads: UploadsDep, caller: CallerDep
) -> ScrapeAnswer | JSONResponse:
    """Read an uploaded file (GET /v2/parse/formats: which) and answer its Document, as
    Firecrawl's parse does; the file is read in a process of its own within a CPU and memory
    budget and its result kept as a finished job (labelled ``upload``)."""
    with uploads.holding(caller.tenant):  # before its body is read
        form = await read_upload_form(request, "options", uploads.limits.max_bytes)
        scraped = await uploads.parse(form.upload, parse_request(form.options), caller.tenant)
    task = scraped.result
    if task is None or task.status is not TaskStatus.SUCCEEDED:
        error = task.error if task is not None else "cancelled"
        content = {
            "success": False,
            "code": "PARSE_FAILED",
            "error": f"could not parse {form.upload.filename}: {error}",
        }
        return JSONResponse(content, status_code=400)
    return ScrapeAnswer(data=_document(task, form.upload))


def parse_request(given: Any) -> PageRequest:
    """What Firecrawl's ``options`` part asks (its JSON; None: markdown), as the native
    request of a page; ``InvalidOption`` naming the field at fault."""
    options = _options(given)
    native: dict[str, Any] = {"options": {"formats": native_formats(options)}}
    OPTIONS.options_to_native(options, native["options"], ServedHere(), upload=True)
    if options.json_format() is not None:
        raise InvalidOption(
            "formats", "the json format needs the ai stage, which does not run on uploads"
        )
    return validated(PageRequest, native)


@router.get("/parse/formats", response_model=ParseFormatsAnswer, response_model_by_alias=True)
async def parse_formats() -> ParseFormatsAnswer:
    """The files ``/v2/parse`` reads (``available`` false: known, not read here; an image
    only where OCR is installed), and the languages OCR reads."""
    languages = list(installed_languages())
    formats = [
        ParseFormat(
            format=kind.name,
            kind="image" if kind.image else "document",
            extensions=list(kind.extensions),
            mime_types=list(kind.media_types),
            available=kind.readable and (bool(languages) or not kind.image),
        )
        for kind in DOCUMENT_TYPES
    ]
    html = ParseFormat(
        format="html", extensions=list(HTML_EXTENSIONS), mime_types=["text/html"], available=True
    )
    return ParseFormatsAnswer(data=ParseFormats(formats=[*formats, html], ocr_languages=languages))


def _options(given: Any) -> ParseOptions:
    try:
        return ParseOptions.model_validate(given or {})
    except ValidationError as exc:
        field, problem = first_problem(exc.errors(), under="options", default="options")
        raise InvalidOption(field, problem) from None


def _document(task: Any, upload: Upload) -> dict[str, Any]:
    """The Document of an upload: its metadata names the file (``sourceURL``, ``url``,
    ``sourceFile``), as Firecrawl's parse does."""
    found = document(task)
    found["metadata"] |= {
        "sourceURL": upload.filename,
        "url": upload.filename,
        "sourceFile": upload.filename,
    }
    return found
