"""A page's browser actions within this deployment's limits (SCRAPEJOBS_ACTIONS_MAX,
_MAX_WAIT_MS, _MAX_SCRIPT_CHARS; Terraform's ``actions_*``): the first limit passed is a 422
naming the field and the setting."""

from __future__ import annotations

from scrapejobs_dispatcher.rules.refusals import OverLimit
from scrapejobs_dispatcher.rules.rules import JobShape
from scrapejobs_shared.options import RENDER
from scrapejobs_shared.options.render.actions import ActionLimits


class WithinActionLimits:
    def __init__(self, limits: ActionLimits) -> None:
        self._limits = limits

    async def check(self, request: JobShape, tenant: str) -> None:
        render = RENDER.of(request.options)
        if render is None or not render.actions:
            return
        passed = self._limits.first_passed(render.actions)
        if passed is not None:
            where, what = passed
            raise OverLimit(f"options.render.actions{where}", what)
