"""Rendering pages in headless Chromium: the browser process, the page renderer (every request
the browser makes goes through the worker's safe fetcher), and the fetcher that renders."""
