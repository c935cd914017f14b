"""What Firecrawl's routes are given besides the native routes' parts (``dependencies.py``):
the site mapper and what the deployment serves (``ServedHere``: its ``/v2`` defaults)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from scrapejobs_dispatcher.dependencies import app_state
from scrapejobs_dispatcher.firecrawl.site_map import SiteMapper
from scrapejobs_shared.options import ServedHere

SiteMapperDep = Annotated[SiteMapper, Depends(app_state("site_mapper"))]
ServedHereDep = Annotated[ServedHere, Depends(app_state("served_here"))]
