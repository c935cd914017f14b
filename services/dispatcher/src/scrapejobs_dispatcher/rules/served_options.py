"""What this deployment serves: an ``ai`` stage needs a configured provider (and a model it
offers); ``options.verify_tls`` false needs SCRAPEJOBS_ALLOW_UNVERIFIED_TLS; a format the
browser makes (a screenshot) needs a file store (SCRAPEJOBS_FILES_BUCKET); and what each option
family (scrapejobs_shared/options) says of what it serves here. Otherwise an
``UnavailableHere`` naming the field and the setting (a 422)."""

from __future__ import annotations

from scrapejobs_dispatcher.rules.refusals import UnavailableHere
from scrapejobs_dispatcher.rules.rules import JobShape
from scrapejobs_shared.domain.browser_actions import Pdf, Screenshot
from scrapejobs_shared.extraction.formats import FORMATS
from scrapejobs_shared.options import OPTIONS, ServedHere
from scrapejobs_shared.pipeline.spec import ai_stage_index


class ServedOptions:
    def __init__(
        self,
        ai_provider: str | None = None,
        ai_models: frozenset[str] | None = None,
        allow_unverified_tls: bool = True,
        keeps_files: bool = True,
        here: ServedHere = ServedHere(),
    ) -> None:
        """``ai_models``: the models a stage may name (None: any); ``keeps_files``: a file
        store is configured."""
        self._ai_provider = ai_provider
        self._ai_models = ai_models
        self._allow_unverified_tls = allow_unverified_tls
        self._keeps_files = keeps_files
        self._here = here

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
        if not request.options.verify_tls and not self._allow_unverified_tls:
            reason = (
                "this deployment always verifies TLS certificates "
                "(SCRAPEJOBS_ALLOW_UNVERIFIED_TLS=false)"
            )
            raise UnavailableHere("options.verify_tls", reason)
        if not self._keeps_files and (kept := _files_asked(request)) is not None:
            field, what = kept
            reason = (
                f"{what} kept in a file store, and none is configured here "
                "(SCRAPEJOBS_FILES_BUCKET)"
            )
            raise UnavailableHere(field, reason)
        if (refusal := OPTIONS.not_served(request, self._here)) is not None:
            raise UnavailableHere(refusal.field, refusal.reason)


def _files_asked(request: JobShape) -> tuple[str, str] | None:
    """The first thing ``request`` asks for that is a file (a screenshot, a page's PDF): its
    field and what it is."""
    if kept := FORMATS.keeping_files(request.options.formats):
        return "options.formats", f"the {kept[0].name} format's file is"
    render = request.options.render
    for index, action in enumerate(render.actions if render is not None else ()):
        if isinstance(action, Screenshot | Pdf):
            return f"options.render.actions[{index}]", f"a {action.type} action's file is"
    return None
