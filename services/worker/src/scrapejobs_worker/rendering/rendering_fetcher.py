"""The worker's ``Fetcher``: plain requests go to the safe fetcher, rendered ones to the
renderer, which only a worker with a browser has (the render lane's service)."""

from __future__ import annotations

from scrapejobs_shared.ports.fetcher import Fetcher, FetchRequest, FetchResponse, RenderUnavailable


class RenderingFetcher:
    def __init__(self, plain: Fetcher, renderer: Fetcher | None) -> None:
        self._plain = plain
        self._renderer = renderer

    async def fetch(self, request: FetchRequest) -> FetchResponse:
        if request.render is None:
            return await self._plain.fetch(request)
        if self._renderer is None:
            raise RenderUnavailable(
                "this worker has no browser (SCRAPEJOBS_RENDER_BROWSER_PATH): rendered jobs run "
                "on the render lane"
            )
        return await self._renderer.fetch(request)

    async def aclose(self) -> None:
        if self._renderer is not None:
            await self._renderer.aclose()
        await self._plain.aclose()
