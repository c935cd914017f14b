"""Firecrawl's formats as native ones: each format by its native name (or as the object it was
asked with when it takes options; ``metadata`` always), and its ``json`` format (or the
changeTracking format's ``json`` mode) as an ``ai`` stage.

| Firecrawl | native |
|---|---|
| ``markdown`` / ``html`` / ``rawHtml`` / ``links`` / ``images`` / ``attributes`` / ``summary`` | the format of that Firecrawl name in the registry (extraction/formats): ``markdown`` / ``clean_html`` / ``html`` / ``links`` / ``images`` / ``attributes`` / ``summary`` (an ``ai`` stage) (``metadata`` always) |
| ``screenshot``, ``screenshot@fullPage``, ``{"type": "screenshot", ...}`` | the ``screenshot`` format |
| ``{"type": "json", "schema", "prompt"}`` | an ``ai`` stage answering into ``json`` |
| ``changeTracking`` (``/v2/scrape``, monitors) | the page compared with the previous scrape of its URL (change_tracking.py); its ``json`` mode an ``ai`` stage (the ``json`` format's, if asked for too) |
"""  # noqa: E501

from __future__ import annotations

from typing import Any

from scrapejobs_dispatcher.firecrawl.format_models import (
    ALIASES,
    ChangeTrackingFormat,
    JsonFormat,
)
from scrapejobs_dispatcher.firecrawl.request_models import ScrapeOptions
from scrapejobs_shared.extraction.formats import (
    FORMATS,
    FormatChoice,
    FormatOptions,
    ScreenshotOptions,
)
from scrapejobs_shared.firecrawl.documents import JSON_FIELD
from scrapejobs_shared.options import InvalidOption

DEFAULT_JSON_PROMPT = "Extract the data the schema describes from the page."
TRACKED_JSON_FIELD = "change_tracking_json"  # the changeTracking json mode's ai answer
OPEN_SCHEMA: dict[str, Any] = {"type": "object"}


def native_formats(options: ScrapeOptions) -> list[FormatChoice]:
    """The native formats of Firecrawl's (``metadata`` always; ``json`` and ``changeTracking``
    are stages and comparisons, not formats): each by its native name, or as the object it
    was asked with when it takes options."""
    found: dict[str, FormatChoice] = {"metadata": "metadata"}
    if (shot := options.screenshot()) is not None:
        found["screenshot"] = ScreenshotOptions(
            type="screenshot", full_page=bool(shot.full_page), quality=shot.quality
        )
    for wanted in options.formats:
        name = wanted if isinstance(wanted, str) else wanted.type
        page_format = FORMATS.firecrawl(ALIASES.get(name, name))
        if page_format is not None:
            choice = wanted if isinstance(wanted, FormatOptions) else page_format.name
            found.setdefault(page_format.name, choice)
    return list(found.values())


def pipeline(options: ScrapeOptions) -> list[dict[str, Any]]:
    """An ``ai`` stage for the ``json`` format, else for the changeTracking format's ``json``
    mode (none without either: one stage answers both)."""
    wanted: JsonFormat | ChangeTrackingFormat | None = options.json_format()
    into = JSON_FIELD
    if wanted is None:
        wanted = options.change_tracking()
        into = TRACKED_JSON_FIELD
        if wanted is None or "json" not in wanted.modes:
            return []
    staged = [f.firecrawl for f in FORMATS.stages(native_formats(options))]
    if staged:
        raise InvalidOption(
            "formats",
            f"{', '.join(map(str, staged))} and json (or changeTracking's json mode) each ask the "
            "language model, and a request asks it once: ask for them in two requests",
        )
    stage = {
        "prompt": wanted.prompt or DEFAULT_JSON_PROMPT,
        "schema": wanted.schema_ or OPEN_SCHEMA,
        "into": into,
    }
    return [{"ai": stage}]


def tracked_field(options: ScrapeOptions) -> str | None:
    """Where the fields the changeTracking format's ``json`` mode compares are (None: no such
    mode)."""
    tracking = options.change_tracking()
    if tracking is None or "json" not in tracking.modes:
        return None
    return JSON_FIELD if options.json_format() is not None else TRACKED_JSON_FIELD
