"""Parsing and extraction: pure functions over bytes and text (no I/O, no cloud or web names)."""

from .content_kind import Classification, ContentKind, UnsupportedContent, classify_content
from .content_scope import DEFAULT_SCOPE, ContentScope
from .decoding import CharsetChoice, DecodedText, choose_charset, decode_body
from .extractor import PageExtraction, extract_page, page_shows_nothing
from .media_type import MediaType
from .result_size import DEFAULT_MAX_BYTES, TRUNCATION_MARKER, fit_result, json_size
from .spec import Fields, FieldSpec, ValueType, check_field_names, check_format_names

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_SCOPE",
    "TRUNCATION_MARKER",
    "CharsetChoice",
    "Classification",
    "ContentKind",
    "ContentScope",
    "DecodedText",
    "FieldSpec",
    "Fields",
    "MediaType",
    "PageExtraction",
    "UnsupportedContent",
    "ValueType",
    "check_field_names",
    "check_format_names",
    "choose_charset",
    "classify_content",
    "decode_body",
    "extract_page",
    "fit_result",
    "json_size",
    "page_shows_nothing",
]
