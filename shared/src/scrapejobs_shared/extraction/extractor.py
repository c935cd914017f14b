"""One page in, its extraction out: the single entry point the worker calls per response.

:func:`extract_page` classifies the response (:mod:`.content_kind`), decodes it
(:mod:`.decoding`), parses markup once, evaluates the job's fields
(:mod:`.field_evaluation`) and has each format asked for produce itself from that one parse
(the registry, :mod:`.formats`: what each format reads, and how).

``data`` holds each field under its name, then each requested format under the format's
name. Per kind of content:

* HTML: fields and every format. ``metadata``, ``links`` and ``images`` resolve URLs
  against the document base URL (``<base href>`` resolved against the final URL, else the
  final URL); ``text`` is the visible text (:mod:`.visible_text`); ``html`` is the decoded
  document as received (not re-serialised).
* XML (feeds, sitemaps): fields work (XML parser, namespaces removed, attribute URLs are
  *not* resolved); ``html`` gives the decoded markup, ``text`` one line per text node;
  ``metadata``/``links``/``images`` get an error.
* JSON: ``data["json"]`` is the parsed document, always. Fields get the error
  ``"content is JSON, not HTML"`` (and their default); the ``text`` format gives the
  decoded body, other formats an error. A body declared as JSON that does not parse
  raises :class:`UnsupportedContent` (``"invalid JSON: ..."``): a task that asked for JSON
  and got something else failed, it did not succeed with nothing. A body merely *sniffed*
  as JSON (no Content-Type) that does not parse is treated as text instead.
* Text (``text/plain``, ``text/csv``...): the ``text`` format gives the decoded body as
  is (structure kept); fields get ``"content is text/plain, not HTML"``; other formats an
  error.
* Documents (PDF): read by :mod:`.documents` under ``documents`` (page limit, page markers):
  ``markdown`` gives its pages (headings, paragraphs, list items), ``text`` their text,
  ``metadata`` what the file says of itself (title, author, dates, page count), ``pages`` each
  page's markdown; fields get
  ``"content is application/pdf, not HTML"``, other formats an error. A password-protected or
  broken file raises :class:`.documents.DocumentUnreadable` (an :class:`UnsupportedContent`).
  With ``documents.read`` false the file is not read: ``markdown``, ``clean_html`` and ``html``
  give its bytes as base64 (Firecrawl's ``parsers: []``).
* Anything else raises :class:`UnsupportedContent` with a reason such as
  ``"unsupported content type image/png"``.

Errors never raise (except :class:`UnsupportedContent`): they go to ``errors``, keyed by
field path or format name, and the value falls back to the field's ``default``. A field
named like a requested format (or ``json`` for JSON content) is replaced by the format's
result, with an error saying so (:func:`.spec.check_format_names` catches this at submit).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lxml import etree  # type: ignore[import-untyped]
from parsel import Selector
from pydantic import JsonValue

from scrapejobs_shared.extraction.browser_result import BrowserResult

from .content_kind import PDF, Classification, ContentKind, UnsupportedContent, classify_content
from .content_scope import DEFAULT_SCOPE, ContentScope
from .decoding import CharsetChoice, choose_charset
from .document_types import BY_MEDIA_TYPE
from .documents import UNREAD_MAX_BYTES, Document, DocumentOptions, read_document
from .field_evaluation import FieldRun, evaluate_fields
from .formats import FORMATS, FormatChoice, FormatUnavailable, Page, format_name
from .media_type import MediaType
from .spec import FieldSpec
from .urls import document_base_url, resolve_url
from .visible_text import shows_nothing

DEFAULT_DOCUMENTS = DocumentOptions()


@dataclass(frozen=True, slots=True)
class PageExtraction:
    """The outcome of extracting one page.

    ``data``: field name → value, then format name → result (and ``json`` for JSON).
    ``errors``: field path or format name → what went wrong (values fell back to defaults).
    ``charset``: the codec the body was decoded with, when it was decoded.
    ``empty``: an HTML page whose body shows nothing (``visible_text.shows_nothing``: no image,
    video or frame, and no text but an app shell's "loading…") or a text body of whitespace.
    """

    data: dict[str, JsonValue]
    errors: dict[str, str]
    content_kind: ContentKind
    charset: str | None = None
    empty: bool = False  # nothing to see: an app shell, a blank body
    document_pages: int = 0  # a PDF's pages read (Firecrawl charges a credit for each)
    ocr_pages: int = 0  # a document's pages read by OCR (a scan's, an image's)
    ocr_credits: int = 0  # what they cost beside the page (OcrLimits.page_weight each)


def extract_page(
    body: bytes,
    *,
    content_type: str | None,
    url: str,
    fields: Mapping[str, FieldSpec] | None = None,
    formats: Iterable[FormatChoice] = (),
    content: ContentScope = DEFAULT_SCOPE,
    documents: DocumentOptions = DEFAULT_DOCUMENTS,
    browser: BrowserResult | None = None,
) -> PageExtraction:
    """Extract ``fields`` and ``formats`` from a response body.

    ``content_type`` is the Content-Type header value (or ``None``), ``url`` the final
    URL after redirects; ``content`` the part of the page ``markdown`` and ``clean_html`` give
    (content_scope.py); ``documents`` how a document (PDF) is read; ``browser`` what the
    browser made of the page (its screenshot's URL: extraction/browser_result.py). Raises
    :class:`UnsupportedContent` for content that cannot be extracted (images, binary, invalid
    JSON, an unreadable document); anything else is reported in ``errors``.
    """
    media = MediaType.parse(content_type)
    classification = classify_content(media, body)
    request = _Request(body, media, url, fields or {}, _distinct(formats), content, browser)
    if classification.kind is ContentKind.UNSUPPORTED:
        raise UnsupportedContent(classification.reason or "unsupported content")
    if classification.kind is ContentKind.DOCUMENT:
        return _document_page(request, classification, documents)
    if classification.kind is ContentKind.JSON:
        return _json_page(request, classification)
    if classification.kind is ContentKind.TEXT:
        return _text_page(request, classification)
    return _markup_page(request, classification)


def _distinct(formats: Iterable[FormatChoice]) -> tuple[FormatChoice, ...]:
    """Each format once (the first time it is named)."""
    seen: dict[str, FormatChoice] = {}
    for choice in formats:
        seen.setdefault(format_name(choice), choice)
    return tuple(seen.values())


def page_shows_nothing(body: bytes, content_type: str | None) -> bool:
    """Whether an HTML page shows nothing as served (an app shell: ``visible_text.
    shows_nothing``), so a browser would have to build it; False for any other content."""
    media = MediaType.parse(content_type)
    if classify_content(media, body).kind is not ContentKind.HTML:
        return False
    choice = choose_charset(body, media, markup=True)
    try:
        root = _parse(body, choice, xml=False)
    except UnsupportedContent:
        return False
    return shows_nothing(root)


@dataclass(frozen=True, slots=True)
class _Request:
    body: bytes
    media: MediaType
    url: str
    fields: Mapping[str, FieldSpec]
    formats: tuple[FormatChoice, ...]
    content: ContentScope = DEFAULT_SCOPE
    browser: BrowserResult | None = None


@dataclass(slots=True)
class _Output:
    data: dict[str, JsonValue] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    def put_formats(self, request: _Request, page: Page) -> None:
        """Each requested format of ``page``, in the order asked (the registry's formats)."""
        for choice in request.formats:
            name = format_name(choice)
            wanted = FORMATS[name]
            if wanted.stage is not None:
                continue  # answered by its stage, on the processing lane
            if page.kind not in wanted.reads:
                self.errors[name] = f"content is {page.described}, not {wanted.reads_described}"
                continue
            try:
                produced = wanted.produce(page, None if isinstance(choice, str) else choice)
            except FormatUnavailable as exc:
                self.errors[name] = str(exc)
                continue
            if name in request.fields:
                self.errors[name] = (
                    f"field {name!r} is replaced by the {name!r} result of the same name; rename it"
                )
            self.data[name] = produced.value
            if produced.note is not None:
                self.errors[name] = produced.note

    def fields_unavailable(self, request: _Request, message: str) -> None:
        for name, spec in request.fields.items():
            self.errors[name] = message
            self.data.setdefault(name, spec.default)


def _markup_page(request: _Request, classification: Classification) -> PageExtraction:
    xml = classification.kind is ContentKind.XML
    choice = choose_charset(request.body, request.media, markup=True)
    root = _parse(request.body, choice, xml=xml)
    page = Page(
        classification.kind,
        classification.describe(),
        request.url,
        request.media,
        request.content,
        root,
        lambda: choice.decode(request.body),
        lambda: document_base_url(root, request.url),
        browser=request.browser,
    )
    run = FieldRun(xml=xml, resolve_url=None if xml else _resolver(page))
    output = _Output(evaluate_fields(request.fields, root, run), run.errors.as_dict())
    output.put_formats(request, page)
    empty = not xml and shows_nothing(root)
    return PageExtraction(output.data, output.errors, classification.kind, choice.codec, empty)


def _resolver(page: Page) -> Callable[[str], str]:
    return lambda raw: resolve_url(page.base_url(), raw)


def _parse(body: bytes, choice: CharsetChoice, *, xml: bool) -> Any:
    """The lxml root of the document, parsed once (by parsel, which repairs broken markup)."""
    content = body[choice.bom_length :]
    kind = "xml" if xml else "html"
    try:
        if not content or content.isspace():  # not strip(): that copies the whole body
            selector = Selector(text="", type=kind)
        else:
            selector = Selector(body=content, encoding=choice.codec, type=kind)
    except etree.LxmlError as exc:  # lxml recovers from nearly anything; not from this
        raise UnsupportedContent(f"unparseable {kind.upper()}: {exc}") from None
    if xml:
        selector.remove_namespaces()
    return selector.root


def _json_page(request: _Request, classification: Classification) -> PageExtraction:
    choice = choose_charset(request.body, request.media, markup=False)
    text = choice.decode(request.body)
    try:
        document = parse_json(text)
    except ValueError as exc:
        if classification.sniffed:
            return _text_page(request, Classification(ContentKind.TEXT, "", sniffed=True), choice)
        raise UnsupportedContent(f"invalid JSON: {exc}") from None
    output = _Output({"json": document})
    output.fields_unavailable(request, "content is JSON, not HTML")
    if "json" in request.fields:
        output.errors["json"] = "field 'json' is replaced by the parsed JSON content; rename it"
    output.put_formats(request, _plain_page(request, classification, lambda: text))
    return PageExtraction(output.data, output.errors, ContentKind.JSON, choice.codec)


def _text_page(
    request: _Request, classification: Classification, choice: CharsetChoice | None = None
) -> PageExtraction:
    output = _Output()
    output.fields_unavailable(request, f"content is {classification.describe()}, not HTML")
    reads_text = any(ContentKind.TEXT in FORMATS[format_name(c)].reads for c in request.formats)
    if choice is None and reads_text:  # decoded only for a format that reads it
        choice = choose_charset(request.body, request.media, markup=False)
    text = choice.decode(request.body) if choice is not None else ""
    output.put_formats(request, _plain_page(request, classification, lambda: text))
    blank = not request.body or request.body.isspace()
    codec = choice.codec if choice is not None else None
    return PageExtraction(output.data, output.errors, ContentKind.TEXT, codec, blank)


def _document_page(
    request: _Request, classification: Classification, options: DocumentOptions
) -> PageExtraction:
    kind = BY_MEDIA_TYPE[classification.media_type]
    if options.kinds is not None and kind.name not in options.kinds:
        raise UnsupportedContent(
            f"the {kind.label} file is not read: the job's documents.kinds leaves {kind.name} out"
        )
    if not options.read:
        return _unread_document(request, classification)
    document = read_document(classification.media_type, request.body, options)
    output = _Output()
    output.fields_unavailable(request, f"content is {classification.describe()}, not HTML")
    page = _plain_page(request, classification, lambda: document.text, document)
    output.put_formats(request, page)
    notes = list(document.notes)
    if document.truncated:
        notes.insert(
            0, f"pages past {len(document.pages)} of {document.page_count} left unread (the limit)"
        )
    if notes:
        output.errors["document"] = "; ".join(notes)
    empty = not document.text.strip()
    pages = len(document.pages) if classification.media_type == PDF else 0
    weight = options.ocr.limits.page_weight if options.ocr is not None else 0
    ocr_credits = document.ocr_pages * weight
    return PageExtraction(
        output.data,
        output.errors,
        ContentKind.DOCUMENT,
        None,
        empty,
        pages,
        document.ocr_pages,
        ocr_credits,
    )


# the formats carrying a document not read, as base64 (Firecrawl's markdown, html, rawHtml)
CARRYING_UNREAD = ("markdown", "clean_html", "html")


def _unread_document(request: _Request, classification: Classification) -> PageExtraction:
    """A document not read (``documents.read`` false, Firecrawl's ``parsers: []``): its bytes
    as base64 in each format of :data:`CARRYING_UNREAD` asked for, when they fit whole."""
    described = classification.describe()
    carrying = [c for c in request.formats if format_name(c) in CARRYING_UNREAD]
    if carrying and len(request.body) * len(carrying) > UNREAD_MAX_BYTES:
        raise UnsupportedContent(
            f"the {described} file ({len(request.body):,} bytes) is too large to answer unread: "
            f"at most {UNREAD_MAX_BYTES // len(carrying):,} bytes in "
            f"{', '.join(format_name(c) for c in carrying)}; let it be read (documents.read)"
        )
    output = _Output()
    output.fields_unavailable(request, f"content is {described}, not HTML")
    encoded = base64.b64encode(request.body).decode("ascii") if carrying else ""
    for choice in request.formats:
        name = format_name(choice)
        if name in CARRYING_UNREAD:
            output.data[name] = encoded
        elif name == "metadata":
            output.data[name] = {"url": request.url, "content_type": described}
        elif FORMATS[name].stage is None:
            output.errors[name] = f"the {described} document was not read (documents.read)"
    return PageExtraction(output.data, output.errors, ContentKind.DOCUMENT, None, False)


def _plain_page(
    request: _Request,
    classification: Classification,
    decode: Callable[[], str],
    document: Document | None = None,
) -> Page:
    """A page without markup: text, JSON, or a ``document`` read."""
    described = classification.describe()
    media, scope = request.media, request.content
    return Page(
        classification.kind,
        described,
        request.url,
        media,
        scope,
        None,
        decode,
        document=document,
        browser=request.browser,
    )


def parse_json(text: str) -> JsonValue:
    """Strict JSON (no NaN/Infinity); ``ValueError`` with a helpful message otherwise."""
    try:
        document: JsonValue = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except ValueError as exc:
        if text.lstrip().startswith("<"):
            raise ValueError(f"{exc} (the body looks like HTML or XML)") from None
        raise
    return document


def _reject_constant(name: str) -> JsonValue:
    raise ValueError(f"{name} is not valid JSON")
