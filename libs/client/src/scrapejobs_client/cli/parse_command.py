"""The CLI's ``parse`` command: a local file read by the service (``POST /v1/parse``), its
markdown printed (``scrapejobs parse report.pdf > report.md``), or the whole answer with
``--json``."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from scrapejobs_client.cli.arguments import JsonFlag
from scrapejobs_client.cli.inputs import read_mapping
from scrapejobs_client.cli.job_commands import Attributes, PageFormats, page_formats
from scrapejobs_client.cli.state import ExitCode, reports_errors, use


class OcrMode(StrEnum):
    AUTO = "auto"
    FAST = "fast"
    OCR = "ocr"


@reports_errors
def parse(
    ctx: typer.Context,
    file: Annotated[
        Path,
        typer.Argument(
            help="The file: PDF, Word, Excel, PowerPoint, OpenDocument, RTF, EPUB, HTML, or an "
            "image (PNG, JPEG, TIFF, WebP, GIF) read by OCR.",
            exists=True,
            dir_okay=False,
            readable=True,
            show_default=False,
        ),
    ],
    page_format: PageFormats = None,
    attribute: Attributes = None,
    max_pages: Annotated[
        int | None,
        typer.Option("--max-pages", min=1, help="Read the document's first pages only."),
    ] = None,
    page_markers: Annotated[
        bool,
        typer.Option("--page-markers", help="Join its pages with ---, then <!-- page N -->."),
    ] = False,
    ocr: Annotated[
        OcrMode | None,
        typer.Option(
            "--ocr",
            help="How pages are read by OCR: auto (the default: a scan's pages without text, "
            "and images), fast (never), ocr (every page).",
            show_default=False,
        ),
    ] = None,
    ocr_language: Annotated[
        list[str] | None,
        typer.Option(
            "--ocr-language",
            help="A language OCR reads in, by its Tesseract name (eng, deu, fra...); repeat it "
            "for several.",
            show_default=False,
        ),
    ] = None,
    request: Annotated[
        Path | None,
        typer.Option(
            "--request",
            help="A JSON or YAML file of what to read, as a job asks of a page (extract, "
            "options, pipeline, labels).",
            show_default=False,
        ),
    ] = None,
    json_output: JsonFlag = False,
) -> None:
    """Read a local file with the service and print its markdown (with --json: the whole
    answer, every format asked for). The result is kept as a finished job. Exit 3 when the
    file could not be read (the reason on stderr)."""
    state = use(ctx, json_output)
    documents: dict[str, Any] = {}
    if max_pages is not None:
        documents["max_pages"] = max_pages
    if page_markers:
        documents["page_markers"] = True
    if ocr is not None:
        documents["ocr"] = ocr.value
    if ocr_language:
        documents["ocr_languages"] = ocr_language
    formats = page_formats(page_format, attribute)
    if formats is None and not json_output:
        formats = ["markdown"]
    parsed = state.client.parse(
        file,
        request=read_mapping(request, "--request") if request is not None else None,
        formats=formats,
        documents=documents or None,
    )
    result = parsed.result
    if json_output:
        state.emit_json(parsed.model_dump(mode="json"))
    elif result is not None and result.status == "succeeded":
        data = result.data or {}
        markdown = data.get("markdown")
        text = markdown if isinstance(markdown, str) else json.dumps(data, indent=2)
        state.out.print(text, markup=False, highlight=False, soft_wrap=True)
    if result is None or result.status != "succeeded":
        if not json_output:
            why = result.error if result is not None else f"job {parsed.job_id} {parsed.status}"
            state.err.print(f"[bold red]error:[/] {file.name}: {why}", highlight=False)
        raise typer.Exit(ExitCode.JOB_UNSUCCESSFUL)
