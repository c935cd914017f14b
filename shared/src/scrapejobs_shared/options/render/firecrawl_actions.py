"""Firecrawl's browser actions, as its SDKs send them: the native actions (``actions.py``) with
camelCase names and the script's type spelt ``executeJavascript``; ``native_action`` makes one
the native action (``options.render.actions``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator
from pydantic.alias_generators import to_camel

from ..camel_model import CamelModel
from . import actions as native

# a native action's config (strict, nothing unknown) with Firecrawl's names
CAMEL = ConfigDict(alias_generator=to_camel, populate_by_name=False)


def _camel(action: type[BaseModel]) -> type[BaseModel]:
    """``action`` as Firecrawl spells it (``FcWait`` of ``Wait``: camelCase names)."""
    namespace = {"model_config": CAMEL, "__module__": __name__}
    return type(f"Fc{action.__name__}", (action,), namespace)


class FcExecuteJavascript(CamelModel):
    """A script run in the page (native: ``execute_javascript``)."""

    type: Literal["executeJavascript"]
    script: native.ScriptText


# the native actions Firecrawl takes as they are but for camelCase names
SAME_BUT_CAMEL: tuple[type[BaseModel], ...] = (native.Wait, native.Click, native.Write)
SAME_BUT_CAMEL += (native.Press, native.Scroll, native.Screenshot, native.Scrape)
_ACTIONS = (*(_camel(a) for a in SAME_BUT_CAMEL), FcExecuteJavascript, _camel(native.Pdf))
if TYPE_CHECKING:
    FcAction = BaseModel
else:  # in the native order: a discriminated union of them
    FcAction = Annotated[Union[_ACTIONS], Discriminator("type")]  # noqa: UP007


def native_action(action: BaseModel) -> dict[str, Any]:
    """A Firecrawl action as the native one (executeJavascript is execute_javascript, its
    fields snake_case)."""
    native_fields = action.model_dump(exclude_none=True)
    if native_fields["type"] == "executeJavascript":
        native_fields["type"] = "execute_javascript"
    return native_fields
