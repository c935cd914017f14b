"""What Firecrawl's routes are given besides the native routes' parts (``dependencies.py``):
the site mapper and the deployment's ``/v2`` defaults."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from scrapejobs_dispatcher.dependencies import app_state
from scrapejobs_dispatcher.firecrawl.site_map import SiteMapper
from scrapejobs_dispatcher.firecrawl.translation import V2Defaults

SiteMapperDep = Annotated[SiteMapper, Depends(app_state("site_mapper"))]
V2DefaultsDep = Annotated[V2Defaults, Depends(app_state("v2_defaults"))]
