"""``render``: a page rendered in headless Chromium before extraction: when (always, or only
the pages that show nothing fetched plainly), what it waits for, what the browser does not
load, its viewport, and the actions it runs once the page settled (``actions.py``; Firecrawl's
spelling: ``firecrawl_actions.py``). A format the browser makes (a screenshot) renders the job.

| Firecrawl | native |
|---|---|
| ``waitFor`` (ms) | ``options.render.wait_ms`` |
| ``mobile`` | ``options.render.viewport`` a phone's (390 x 844) |
| ``actions`` | ``options.render.actions`` (images and fonts loaded) |
| a ``screenshot`` format | ``options.render`` (images and fonts loaded; its ``viewport``) |
| none of them | no rendering, or ``"auto"`` where the deployment says so (``ServedHere.firecrawl_render``) |

An upload is not rendered: these are refused on one."""  # noqa: E501

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from pydantic.config import JsonDict

from scrapejobs_shared.extraction.css_selector import CssSelector
from scrapejobs_shared.extraction.field_types import JSON_INT
from scrapejobs_shared.extraction.formats import FORMATS

from ..option_family import NO_FILE_STORE, NotServed, OptionFamily, ServedHere
from .actions import MAX_ACTIONS, Action, Pdf, Screenshot
from .firecrawl_actions import FcAction, native_action
from .viewport import Viewport

BlockedResource = Literal["image", "font", "media", "stylesheet"]
DEFAULT_BLOCKED: tuple[BlockedResource, ...] = ("image", "font", "media")
MAX_RENDER_WAIT_MS = 30_000
MOBILE_VIEWPORT = {"width": 390, "height": 844}


class RenderOptions(BaseModel):
    """How a page is rendered in headless Chromium before extraction."""

    model_config = ConfigDict(extra="forbid", strict=True)

    when: Literal["always", "auto"] = Field(
        default="always",
        description="always: every page; auto: a page is fetched plainly first and rendered "
        "only when it shows nothing (an app shell built by scripts)",
    )

    wait_for: CssSelector | None = Field(
        default=None,
        description="A CSS selector: extraction waits until an element matches it (within the "
        "job's timeout_s; past it the task fails render_timeout)",
    )
    wait_ms: Annotated[int, Field(ge=0, le=MAX_RENDER_WAIT_MS), JSON_INT] = Field(
        default=0, description="A fixed wait after the page loaded (and wait_for matched)"
    )
    block: list[BlockedResource] = Field(
        default_factory=lambda: list(DEFAULT_BLOCKED),
        max_length=4,
        description="Resource types the browser does not load",
    )
    viewport: Viewport = Field(default_factory=Viewport)
    actions: list[Action] = Field(
        default_factory=list,
        max_length=MAX_ACTIONS,
        description="What the browser does once the page settled and before it is read, in "
        "order: wait, click, write, press, scroll, screenshot, scrape, execute_javascript, pdf "
        "(their answers: the result's actions)",
    )


def _render_flag(value: Any) -> Any:
    """``render: true`` renders with the defaults, ``false`` does not render, ``"auto"``
    renders the pages that show nothing fetched plainly."""
    if value is True:
        return {}
    if value == "auto":
        return {"when": "auto"}
    return None if value is False else value


def _also_boolean(schema: JsonDict) -> None:
    """What ``_render_flag`` accepts, for the OpenAPI document: a boolean and "auto" too."""
    any_of = schema.get("anyOf")
    if isinstance(any_of, list):
        any_of.insert(1, {"type": "boolean"})
        any_of.insert(2, {"type": "string", "enum": ["auto"]})


class Render(OptionFamily):
    name = "render"
    native_fields = {
        "options": {
            "render": (
                Annotated[RenderOptions | None, BeforeValidator(_render_flag)],
                Field(
                    default=None,
                    description="Render the page in headless Chromium before extraction: true "
                    'for the defaults, "auto" to render only pages that show nothing fetched '
                    "plainly (app shells), or an object (when, wait_for, wait_ms, block, "
                    "viewport)",
                    json_schema_extra=_also_boolean,
                ),
            )
        }
    }
    firecrawl_fields = {
        "scrape_options": {
            "wait_for": (
                Annotated[int, Field(ge=0, le=MAX_RENDER_WAIT_MS), JSON_INT],
                Field(default=0, description="ms: rendering"),
            ),
            "mobile": (bool, Field(default=False)),
            "actions": (
                list[FcAction] | None,
                Field(
                    default=None,
                    max_length=MAX_ACTIONS,
                    description="What the browser does once the page settled, before it is "
                    "read (the page renders): wait, click, write, press, scroll, screenshot, "
                    "scrape, executeJavascript, pdf; answered in the Document's actions",
                ),
            ),
        }
    }
    firecrawl_names = {
        "options.render.actions": "actions",
        "options.render": "waitFor",
    }
    uploads = "refused"
    on_uploads = "an upload is not rendered"

    def of(self, options: Any) -> RenderOptions | None:
        """How a job's pages are rendered (None: they are not)."""
        found: RenderOptions | None = options.render
        return found

    def settle(self, options: Any) -> None:
        """A format the browser makes (a screenshot) renders the job: as ``render`` says, else
        loading images and fonts (the page as a reader sees it). Actions answer ``actions``."""
        if options.render is None and FORMATS.browser_made(options.formats):
            options.render = RenderOptions(block=["media"])
        render = self.of(options)
        if render is not None and render.actions and "actions" not in options.formats:
            options.formats.append("actions")

    def served(self, request: Any, here: ServedHere) -> NotServed | None:
        """An action making a file (a screenshot, a page's PDF) needs a file store."""
        render = self.of(request.options)
        for index, action in enumerate(render.actions if render is not None else ()):
            if not here.keeps_files and isinstance(action, Screenshot | Pdf):
                field = f"options.render.actions[{index}]"
                return NotServed(field, f"a {action.type} action's file is {NO_FILE_STORE}")
        return None

    def options_to_native(self, given: BaseModel, native: dict[str, Any], here: ServedHere) -> None:
        wait_ms: int = getattr(given, "wait_for", 0)
        mobile: bool = getattr(given, "mobile", False)
        actions: list[BaseModel] = getattr(given, "actions", None) or []
        asked = getattr(given, "screenshot", None)
        shot = asked() if callable(asked) else None  # Firecrawl's screenshot format
        if not (wait_ms or mobile or shot is not None or actions):
            if here.firecrawl_render == "auto":
                native["render"] = "auto"
            return
        render: dict[str, Any] = {"wait_ms": wait_ms}
        if mobile:
            render["viewport"] = MOBILE_VIEWPORT
        if shot is not None:  # the page as a reader sees it: images and fonts loaded
            render["block"] = ["media"]
            if shot.viewport is not None:
                render["viewport"] = shot.viewport.model_dump()
        if actions:
            render["actions"] = [native_action(action) for action in actions]
            render.setdefault("block", ["media"])  # the page as a reader sees it
        native["render"] = render


RENDER = Render()
