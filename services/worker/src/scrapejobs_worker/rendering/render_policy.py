"""How much a rendered page may take of the renderer (its settings, read once)."""

from __future__ import annotations

from dataclasses import dataclass

MAX_SCREENSHOT_PX = 16_384  # the tallest full-page screenshot (Chromium's own texture limit)


@dataclass(frozen=True, slots=True)
class RenderPolicy:
    """How much a rendered page may take: its HTML's bytes (SCRAPEJOBS_MAX_BODY_BYTES), a
    full-page screenshot's height, how long an action's script may run
    (SCRAPEJOBS_ACTIONS_SCRIPT_TIMEOUT_S)."""

    max_page_bytes: int
    max_screenshot_px: int = MAX_SCREENSHOT_PX
    script_timeout_s: float = 5.0
