"""What this deployment serves: an ``ai`` stage needs a configured provider (and a model it
offers); a format keeping a file (a screenshot) needs a file store (SCRAPEJOBS_FILES_BUCKET);
and what each option family (scrapejobs_shared/options) says of what it serves here (the
proxies: the caller's tenant's own pool, where it has one). Otherwise an ``UnavailableHere``
naming the field and the setting (a 422)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from scrapejobs_dispatcher.rules.refusals import UnavailableHere
from scrapejobs_dispatcher.rules.rules import JobShape
from scrapejobs_shared.extraction.formats import FORMATS
from scrapejobs_shared.options import OPTIONS, ServedHere
from scrapejobs_shared.options.option_family import NO_FILE_STORE
from scrapejobs_shared.pipeline.spec import ai_stage_index
from scrapejobs_shared.tenant_pools import ProxyPools


class ServedOptions:
    def __init__(
        self,
        ai_provider: str | None = None,
        ai_models: frozenset[str] | None = None,
        here: ServedHere = ServedHere(),
        pools: ProxyPools | None = None,
    ) -> None:
        """``ai_models``: the models a stage may name (None: any). ``pools``: the tenants' own
        proxy pools, served to them instead of ``here.proxies``."""
        self._ai_provider = ai_provider
        self._ai_models = ai_models
        self._here = here
        self._pools = pools

    async def check(self, request: JobShape, tenant: str) -> None:
        index = ai_stage_index(request.pipeline)
        if index is not None and self._ai_provider is None:
            reason = "no AI provider is configured here (SCRAPEJOBS_AI_PROVIDER)"
            staged = FORMATS.stages(request.options.formats)
            if staged:  # the stage of a format (summary), not one the caller wrote
                reason = f"the {staged[0].name} format asks a language model: {reason}"
                raise UnavailableHere("options.formats", reason)
            raise UnavailableHere(f"pipeline[{index}].ai", reason)
        if index is not None and self._ai_models is not None:
            model = getattr(request.pipeline[index].options, "model", None)
            if model is not None and model not in self._ai_models:
                offered = ", ".join(sorted(self._ai_models))
                reason = f"model {model!r} is not offered here (offered: {offered})"
                raise UnavailableHere(f"pipeline[{index}].ai.model", reason)
        if not self._here.keeps_files and (kept := FORMATS.keeping_files(request.options.formats)):
            reason = f"the {kept[0].name} format's file is {NO_FILE_STORE}"
            raise UnavailableHere("options.formats", reason)
        await self.check_options(request, tenant)

    async def check_options(self, request: Any, tenant: str) -> None:
        """What the option families say of ``request`` (a job's, or a scrape's with options
        of its own) for ``tenant``: an ``UnavailableHere`` if one is not served."""
        if (refusal := OPTIONS.not_served(request, await self._here_for(tenant))) is not None:
            raise UnavailableHere(refusal.field, refusal.reason)

    async def _here_for(self, tenant: str) -> ServedHere:
        if self._pools is None or not self._pools.per_tenant:
            return self._here
        return replace(self._here, proxies=await self._pools.pool_of(tenant))
