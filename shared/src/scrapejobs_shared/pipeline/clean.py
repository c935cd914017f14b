"""The ``clean`` stage: tidy strings and drop empty values, recursively (see
:class:`~scrapejobs_shared.pipeline.spec.CleanOptions` for the rules and their order)."""

from __future__ import annotations

import html
import re
from typing import Any

from scrapejobs_shared.pipeline.spec import CleanOptions

_WHITESPACE = re.compile(r"\s+")


def clean(data: dict[str, Any], options: CleanOptions) -> dict[str, Any]:
    """A cleaned copy of ``data``: the chosen top-level fields cleaned, the others kept."""
    cleaned: dict[str, Any] = {}
    for name, value in data.items():
        chosen = options.fields is None or name in options.fields
        if not chosen or name in options.skip:
            cleaned[name] = value
            continue
        value = _clean_value(value, options)
        if not (options.drop_empty and _empty(value)):
            cleaned[name] = value
    return cleaned


def _clean_value(value: Any, options: CleanOptions) -> Any:
    if isinstance(value, str):
        return _clean_text(value, options)
    if isinstance(value, list):
        items = [_clean_value(item, options) for item in value]
        return [item for item in items if not (options.drop_empty and _empty(item))]
    if isinstance(value, dict):
        entries = {key: _clean_value(item, options) for key, item in value.items()}
        return {
            key: item for key, item in entries.items() if not (options.drop_empty and _empty(item))
        }
    return value


def _clean_text(text: str, options: CleanOptions) -> str:
    if options.unescape_html:
        text = html.unescape(text)
    if options.collapse_whitespace:
        text = _WHITESPACE.sub(" ", text)
    if options.trim:
        text = text.strip()
    return text


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | dict) and len(value) == 0)
