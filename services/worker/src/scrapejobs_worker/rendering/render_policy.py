"""How much a rendered page may take of the renderer (its settings, read once)."""

from __future__ import annotations

from dataclasses import dataclass

MAX_SCREENSHOT_PX = 16_384  # the tallest full-page screenshot (Chromium's own texture limit)
MAX_SCREENSHOT_WIDTH = 3_840  # the widest (a page wider than its viewport is cut at it)
MAX_SCREENSHOT_PIXELS = 32 << 20  # a full-page screenshot's area (~128 MiB of RGBA to encode)
MAX_PDF_PAGES = 100  # a pdf action's pages (the first ones)


@dataclass(frozen=True, slots=True)
class RenderPolicy:
    """How much a rendered page may take: its HTML's bytes (SCRAPEJOBS_MAX_BODY_BYTES), which
    also bound what its actions answer in all (scrapes' HTML, scripts' values as JSON); a
    full-page screenshot's height, width and area; a pdf action's pages
    (SCRAPEJOBS_ACTIONS_MAX_PDF_PAGES); how long an action's script may run
    (SCRAPEJOBS_ACTIONS_SCRIPT_TIMEOUT_S)."""

    max_page_bytes: int
    max_screenshot_px: int = MAX_SCREENSHOT_PX
    script_timeout_s: float = 5.0
    max_pdf_pages: int = MAX_PDF_PAGES
