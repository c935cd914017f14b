"""The monitor calls of the API client (``/v1/monitors``). Mixed into ``Client``, whose
``_send`` and ``_get`` they use."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import httpx

from scrapejobs_client.monitor_models import (
    Monitor,
    MonitorCheck,
    MonitorCheckList,
    MonitorList,
    MonitorPage,
    MonitorPages,
)
from scrapejobs_client.paths import segment


class MonitorsApi:
    _send: Callable[..., httpx.Response]  # Client's: send with retries, raise non-2xx
    _get: Callable[..., Any]  # Client's: a GET's JSON

    def create_monitor(self, body: Mapping[str, Any]) -> Monitor:
        """``POST /v1/monitors``: what a job takes, plus ``name``, ``schedule`` (``{"cron",
        "timezone"}`` or ``{"text": "every 30 minutes"}``), ``rules``, ``retention_days``."""
        return Monitor.model_validate(self._send("POST", "/v1/monitors", json=dict(body)).json())

    def get_monitor(self, monitor_id: str) -> Monitor:
        return Monitor.model_validate(self._get(f"/v1/monitors/{segment(monitor_id)}"))

    def monitors(self, page_size: int = 100) -> Iterator[Monitor]:
        """``GET /v1/monitors``: the key's tenant's monitors, newest first, every page."""
        token: str | None = None
        while True:
            params = {"page_size": page_size, "page_token": token}
            page = MonitorList.model_validate(self._get("/v1/monitors", params))
            yield from page.monitors
            if (token := page.next_page_token) is None:
                return

    def update_monitor(self, monitor_id: str, changes: Mapping[str, Any]) -> Monitor:
        """``PATCH /v1/monitors/{id}``: ``name``, ``schedule``, ``rules``, ``status``,
        ``retention_days`` or ``webhook``; the others are kept."""
        path = f"/v1/monitors/{segment(monitor_id)}"
        return Monitor.model_validate(self._send("PATCH", path, json=dict(changes)).json())

    def pause_monitor(self, monitor_id: str) -> Monitor:
        path = f"/v1/monitors/{segment(monitor_id)}:pause"
        return Monitor.model_validate(self._send("POST", path).json())

    def resume_monitor(self, monitor_id: str) -> Monitor:
        path = f"/v1/monitors/{segment(monitor_id)}:resume"
        return Monitor.model_validate(self._send("POST", path).json())

    def delete_monitor(self, monitor_id: str) -> None:
        self._send("DELETE", f"/v1/monitors/{segment(monitor_id)}")

    def run_monitor(self, monitor_id: str) -> MonitorCheck:
        """``POST /v1/monitors/{id}:run``: a check now (``skipped_overlap`` while one runs)."""
        path = f"/v1/monitors/{segment(monitor_id)}:run"
        return MonitorCheck.model_validate(self._send("POST", path).json())

    def monitor_checks(self, monitor_id: str, page_size: int = 100) -> Iterator[MonitorCheck]:
        """The monitor's checks, newest first, every page."""
        token: str | None = None
        while True:
            params = {"page_size": page_size, "page_token": token}
            path = f"/v1/monitors/{segment(monitor_id)}/checks"
            page = MonitorCheckList.model_validate(self._get(path, params))
            yield from page.checks
            if (token := page.next_page_token) is None:
                return

    def get_check(self, monitor_id: str, check_id: str) -> MonitorCheck:
        path = f"/v1/monitors/{segment(monitor_id)}/checks/{segment(check_id)}"
        return MonitorCheck.model_validate(self._get(path))

    def wait_check(
        self, monitor_id: str, check_id: str, interval_s: float = 1.0, timeout_s: float = 600
    ) -> MonitorCheck:
        """Poll the check until it finished (``TimeoutError`` after ``timeout_s``)."""
        deadline = time.monotonic() + timeout_s
        while not (check := self.get_check(monitor_id, check_id)).finished:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"check {check_id} still {check.status}")
            time.sleep(interval_s)
        return check

    def check_pages(
        self, monitor_id: str, check_id: str, status: str | None = None, page_size: int = 100
    ) -> Iterator[MonitorPage]:
        """A check's pages (of ``status``: same, new, changed, removed, error), with diffs."""
        token: str | None = None
        path = f"/v1/monitors/{segment(monitor_id)}/checks/{segment(check_id)}/pages"
        while True:
            params = {"status": status, "page_size": page_size, "page_token": token}
            page = MonitorPages.model_validate(self._get(path, params))
            yield from page.pages
            if (token := page.next_page_token) is None:
                return
