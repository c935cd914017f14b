"""``documents``: how the documents among a job's pages (PDF, Word, spreadsheets, images...)
are read: a page limit, Firecrawl's page markers, OCR (of scans and images), the kinds read, or
not read at all.

| Firecrawl | native |
|---|---|
| ``parsers`` unset, ``["pdf"]``, ``["pdf", "image"]`` | ``options.documents`` as it defaults |
| ``{"type": "pdf", "maxPages", "pageMarkers"}`` | ``options.documents.max_pages``, ``page_markers`` |
| ``{"type": "pdf", "mode": "fast" | "auto" | "ocr"}`` | ``options.documents.ocr`` |
| ``{"type": "pdf", "pages": true}`` | the ``pages`` format (Document.pages) |
| ``location.languages`` | OCR's languages, unless ``options.documents.ocr_languages`` |
| ``[]`` | ``options.documents.read`` false (the file's bytes as base64) |
| ``blocks: true`` | refused: no layout blocks |"""  # noqa: E501

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
)
from pydantic.config import JsonDict

from scrapejobs_shared.extraction.document_types import DOCUMENT_TYPES
from scrapejobs_shared.extraction.documents import (
    DEFAULT_MAX_PAGES,
    UNREAD_MAX_BYTES,
    DocumentOptions,
)
from scrapejobs_shared.extraction.documents.ocr import (
    DEFAULT_DPI,
    LANGUAGE_PATTERN,
    MAX_DPI,
    OcrLimits,
    OcrMode,
    OcrRequest,
)
from scrapejobs_shared.extraction.field_types import JSON_INT

from .camel_model import CamelModel
from .option_family import OptionFamily, ServedHere

if TYPE_CHECKING:
    DocumentKind = str
else:  # the names of the kinds of document read (document_types.py)
    DocumentKind = Literal[tuple(kind.name for kind in DOCUMENT_TYPES if kind.readable)]
MAX_OCR_LANGUAGES = 4
OcrLanguage = Annotated[str, StringConstraints(pattern=LANGUAGE_PATTERN)]
OCR_MODE_DESCRIPTION = (
    "How pages are read by OCR (Tesseract): auto, the text layer, and OCR for a page that has "
    "none (a scan) and for images; fast, the text layer only (an image is not read); ocr, "
    "every page by OCR"
)


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

    ocr: OcrMode = Field(default="auto", description=OCR_MODE_DESCRIPTION)
    ocr_languages: list[OcrLanguage] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_OCR_LANGUAGES,
        description="The languages OCR reads, by their Tesseract names (eng, deu, chi_sim...: "
        "those installed are listed by GET /v2/parse/formats); unset: the job's "
        "location.languages that are installed, else eng",
    )
    ocr_dpi: Annotated[int, Field(ge=72, le=MAX_DPI), JSON_INT] = Field(
        default=DEFAULT_DPI,
        description="The resolution a PDF page is rasterised at for OCR (less for a page so "
        "large that its image would pass the deployment's pixel limit)",
    )

    def reading(
        self, limits: OcrLimits = OcrLimits(), asked_in: tuple[str, ...] = ()
    ) -> DocumentOptions:
        """How documents are read, within a deployment's OCR ``limits``; ``asked_in``: the
        languages the pages were asked in (location.languages)."""
        kinds = None if self.kinds is None else frozenset(self.kinds)
        languages = tuple(self.ocr_languages or ())
        ocr = OcrRequest(self.ocr, languages, asked_in, self.ocr_dpi, limits)
        return DocumentOptions(self.max_pages, self.page_markers, self.read, kinds, ocr)


class PdfParser(CamelModel):
    """``{"type": "pdf", "mode", "maxPages", "pages", "pageMarkers"}``: how a PDF is read."""

    type: Literal["pdf"]
    mode: OcrMode | None = Field(default=None, description=OCR_MODE_DESCRIPTION + " (unset: auto)")
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

    @field_validator("blocks")
    @classmethod
    def _no_blocks(cls, value: bool | None) -> bool | None:
        if value:
            raise ValueError("layout blocks are not produced; leave blocks out")
        return value


class ImageParser(CamelModel):
    """``"image"`` or ``{"type": "image"}``: images are read by OCR (as they are anyway, unless
    the pdf parser's mode is ``fast``)."""

    type: Literal["image"]


def _parser_object(value: Any) -> Any:
    """A parser as its object (``"pdf"`` or ``"image"`` named alone)."""
    if isinstance(value, str):
        if value not in ("pdf", "image"):
            raise ValueError(f'unknown parser {value!r}: "pdf", "image", or {{"type": "pdf", ...}}')
        return {"type": value}
    return value


def _parsers_schema(schema: JsonDict) -> None:
    """The parsers' items documented as they are accepted: "pdf", or the pdf parser object."""
    for member in cast(list[JsonDict], schema.get("anyOf", [schema])):
        items = member.get("items")
        if isinstance(items, dict):
            member["items"] = {"anyOf": [{"type": "string", "enum": ["pdf", "image"]}, items]}


ParserOption = Annotated[
    Annotated[PdfParser | ImageParser, Field(discriminator="type")],
    BeforeValidator(_parser_object),
]


def pdf_parser(given: BaseModel) -> PdfParser | None:
    """The pdf parser Firecrawl's scrape options ``given`` ask for (unset, or only "image":
    the default one; None: ``parsers: []``, documents unread)."""
    parsers: list[PdfParser | ImageParser] | None = getattr(given, "parsers", None)
    if parsers is None:
        return PdfParser(type="pdf")
    if not parsers:
        return None
    return next((p for p in parsers if isinstance(p, PdfParser)), PdfParser(type="pdf"))


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
                    description='How documents are read: unset, a PDF is read ("pdf"), a '
                    'scan and an image by OCR; ["pdf"] or a pdf parser object: read with its '
                    'options (mode: fast, auto or ocr); "image": images read by OCR (as by '
                    "default); []: not read, its bytes answered as base64 in markdown (at "
                    f"most {UNREAD_MAX_BYTES:,} bytes)",
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
        if parser.mode is not None and parser.mode != "auto":
            reading["ocr"] = parser.mode
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
