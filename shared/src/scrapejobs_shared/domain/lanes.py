"""The lanes a task travels in: one topic and push subscription (each with its dead-letter topic
and subscription) per lane, so a backlog in one lane never waits in front of another's work.
Three priorities, the render lane (pages rendered in a browser, pushed to the renderer: a
worker with Chromium), the processing lane (an ``ai`` stage and the stages after it, for pages
already fetched) and the documents lane (URLs that name a document by their file extension:
``delivery/url_lanes.py``). The broker's topics and subscriptions of each lane:
``messaging/topology.py``."""

from __future__ import annotations

RENDER_LANE = "render"
PROCESSING_LANE = "processing"
DOCUMENTS_LANE = "documents"
LANES = ("high", "normal", "low", RENDER_LANE, PROCESSING_LANE, DOCUMENTS_LANE)
DEFAULT_LANE = "normal"
