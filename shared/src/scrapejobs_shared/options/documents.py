"""``documents``: how the documents among a job's pages (PDF, Word, spreadsheets...) are read:
a page limit, Firecrawl's page markers, the kinds read, or not read at all.

| Firecrawl | native |
|---|---|
| ``parsers`` unset, ``["pdf"]`` | ``options.documents`` as it defaults |
| ``{"type": "pdf", "maxPages", "pageMarkers"}`` | ``options.documents.max_pages``, ``page_markers`` |
| ``{"type": "pdf", "pages": true}`` | the ``pages`` format (Document.pages) |
| ``[]`` | ``options.documents.read`` false (the file's bytes as base64) |
| ``"image"``, ``mode: "ocr"``, ``blocks: true`` | refused: no OCR engine, no layout blocks |"""  # noqa: E501

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator
from pydantic.config import JsonDict

from scrapejobs_shared.extraction.document_types import DOCUMENT_TYPES
from scrapejobs_shared.extraction.documents import (
    DEFAULT_MAX_PAGES,
    UNREAD_MAX_BYTES,
    DocumentOptions,
)
from scrapejobs_shared.extraction.field_types import JSON_INT

from .camel_model import CamelModel
from .option_family import OptionFamily, ServedHere

if TYPE_CHECKING:
    DocumentKind = str
else:  # the names of the kinds of document read (document_types.py)
    DocumentKind = Literal[tuple(kind.name for kind in DOCUMENT_TYPES if kind.readable)]
NO_OCR = "needs an OCR engine, and this deployment has none"


class DocumentsOptions(BaseModel):
    """How the documents (PDF) among a job's pages are read."""

    model_config = ConfigDict(extra="forbid", strict=True)

    max_pages: Annotated[int, Field(ge=1, le=DEFAULT_MAX_PAGES), JSON_INT] = Field(
        default=DEFAULT_MAX_PAGES,
        description="Read a document's first pages only, up to this many (the result's "
        "errors.document says when pages were left unread)",
    )
    page_markers: bool = Field(
        default=False,
        description="Join a document's pages in its markdown with Firecrawl's page markers "
        "(---, then <!-- page N -->) instead of a blank line",
    )
    read: bool = Field(
        default=True,
        description="false: documents are not read; the markdown, clean_html and html formats "
        f"answer the file's bytes as base64 (Firecrawl's parsers: []): at most "
        f"{UNREAD_MAX_BYTES:,} bytes shared among the formats carrying them (a larger file "
        "fails unsupported_content)",
    )
    kinds: list[DocumentKind] | None = Field(
        default=None,
        min_length=1,
        description="The kinds of document read (default: every kind); a response of another "
        "kind fails unsupported_content, saying so",
    )

    def reading(self) -> DocumentOptions:
        kinds = None if self.kinds is None else frozenset(self.kinds)
        return DocumentOptions(self.max_pages, self.page_markers, self.read, kinds)


class PdfParser(CamelModel):
    """``{"type": "pdf", "mode", "maxPages", "pages", "pageMarkers"}``: how a PDF is read (its
    text layer: ``fast`` and ``auto`` alike, a page without one stays empty)."""

    type: Literal["pdf"]
    mode: Literal["fast", "auto", "ocr"] | None = Field(
        default=None,
        description=f'fast or auto (the default): the text layer; "ocr" {NO_OCR}',
        json_schema_extra=lambda schema: schema.update(
            anyOf=[{"type": "string", "enum": ["fast", "auto"]}, {"type": "null"}]
        ),
    )
    max_pages: Annotated[int, Field(ge=1, le=DEFAULT_MAX_PAGES), JSON_INT] | None = Field(
        default=None, description="Read the first pages only, up to this many"
    )
    pages: bool | None = Field(
        default=None, description="true: Document.pages, each page's markdown"
    )
    page_markers: bool | None = Field(
        default=None, description="true: pages joined by ---, then <!-- page N -->"
    )
    blocks: bool | None = Field(
        default=None,
        description="Refused unless false: layout blocks are not produced",
        json_schema_extra={"enum": [False, None]},
    )

    @field_validator("mode")
    @classmethod
    def _no_ocr(cls, value: str | None) -> str | None:
        if value == "ocr":
            raise ValueError(f'mode "ocr" {NO_OCR}: use "fast" or "auto" (the text layer)')
        return value

    @field_validator("blocks")
    @classmethod
    def _no_blocks(cls, value: bool | None) -> bool | None:
        if value:
            raise ValueError("layout blocks are not produced; leave blocks out")
        return value


def _parser_object(value: Any) -> Any:
    """A parser as its object (``"pdf"`` named alone); ``"image"`` (OCR of images) refused."""
    if value == "image" or (isinstance(value, dict) and value.get("type") == "image"):
        raise ValueError(f'the "image" parser {NO_OCR}; leave it out of parsers')
    if isinstance(value, str):
        if value != "pdf":
            raise ValueError(f'unknown parser {value!r}: "pdf", or {{"type": "pdf", ...}}')
        return {"type": value}
    return value


def _parsers_schema(schema: JsonDict) -> None:
    """The parsers' items documented as they are accepted: "pdf", or the pdf parser object."""
    for member in cast(list[JsonDict], schema.get("anyOf", [schema])):
        items = member.get("items")
        if isinstance(items, dict):
            member["items"] = {"anyOf": [{"type": "string", "enum": ["pdf"]}, items]}


ParserOption = Annotated[PdfParser, BeforeValidator(_parser_object)]


def pdf_parser(given: BaseModel) -> PdfParser | None:
    """The pdf parser Firecrawl's scrape options ``given`` ask for (unset: the default one;
    None: ``parsers: []``, documents unread)."""
    parsers: list[PdfParser] | None = getattr(given, "parsers", None)
    if parsers is None:
        return PdfParser(type="pdf")
    return parsers[0] if parsers else None


class Documents(OptionFamily):
    name = "documents"
    native_fields = {
        "options": {
            "documents": (
                DocumentsOptions,
                Field(
                    default_factory=DocumentsOptions,
                    description="How documents (PDF) are read: their markdown, text and metadata",
                ),
            )
        }
    }
    firecrawl_fields = {
        "scrape_options": {
            "parsers": (
                list[ParserOption] | None,
                Field(
                    default=None,
                    max_length=2,
                    description='How documents are read: unset, a PDF is read ("pdf"); '
                    '["pdf"] or a pdf parser object: read with its options; []: not read, its '
                    f"bytes answered as base64 in markdown (at most {UNREAD_MAX_BYTES:,} "
                    f'bytes). "image" and mode "ocr" {NO_OCR}',
                    json_schema_extra=_parsers_schema,
                ),
            )
        }
    }
    firecrawl_names = {"options.documents.max_pages": "parsers[0].maxPages"}

    def of(self, options: Any) -> DocumentsOptions:
        found: DocumentsOptions = options.documents
        return found

    def options_to_native(self, given: BaseModel, native: dict[str, Any], here: ServedHere) -> None:
        """What differs from the default: the pdf parser's page limit and markers (and its
        pages, the ``pages`` format), or (``parsers: []``) documents not read."""
        parser = pdf_parser(given)
        if parser is None:
            native["documents"] = {"read": False}
            return
        reading: dict[str, Any] = {}
        if parser.page_markers:
            reading["page_markers"] = True
        if parser.max_pages is not None:
            reading["max_pages"] = parser.max_pages
        if reading:
            native["documents"] = reading
        formats = native.setdefault("formats", [])
        if parser.pages and "pages" not in formats:
            formats.append("pages")  # Document.pages


DOCUMENTS = Documents()
