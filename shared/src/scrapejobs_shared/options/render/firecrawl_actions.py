"""Firecrawl's browser actions, as its SDKs send them: the native actions (``actions.py``) with
camelCase names and the script's type spelt ``executeJavascript``; ``native_action`` makes one
the native action (``options.render.actions``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator
from pydantic.alias_generators import to_camel

from ..camel_model import CamelModel
from . import actions as native

# a native action's config (strict, nothing unknown) with Firecrawl's names
CAMEL = ConfigDict(alias_generator=to_camel, populate_by_name=False)


class FcWait(native.Wait):
    model_config = CAMEL


class FcClick(native.Click):
    model_config = CAMEL


class FcWrite(native.Write):
    model_config = CAMEL


class FcPress(native.Press):
    model_config = CAMEL


class FcScroll(native.Scroll):
    model_config = CAMEL


class FcScreenshot(native.Screenshot):
    model_config = CAMEL


class FcScrape(native.Scrape):
    model_config = CAMEL


class FcExecuteJavascript(CamelModel):
    """A script run in the page (native: ``execute_javascript``)."""

    type: Literal["executeJavascript"]
    script: native.ScriptText


class FcPdf(native.Pdf):
    model_config = CAMEL


FcAction = Annotated[
    FcWait
    | FcClick
    | FcWrite
    | FcPress
    | FcScroll
    | FcScreenshot
    | FcScrape
    | FcExecuteJavascript
    | FcPdf,
    Discriminator("type"),
]


def native_action(action: BaseModel) -> dict[str, Any]:
    """A Firecrawl action as the native one (executeJavascript is execute_javascript, its
    fields snake_case)."""
    native_fields = action.model_dump(exclude_none=True)
    if native_fields["type"] == "executeJavascript":
        native_fields["type"] = "execute_javascript"
    return native_fields
