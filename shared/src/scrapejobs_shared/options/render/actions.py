"""Browser actions: what the renderer does to a page once it settled and before it is read, in
the order given (``options.render.actions``; Firecrawl's ``actions``). Each is one model,
told apart by ``type``; what they answer (screenshots, scrapes, scripts' returns, PDFs) is the
result's ``actions`` (extraction/formats/actions.py).

The hard limits here hold for every deployment; a deployment may set lower ones
(``ActionLimits``: SCRAPEJOBS_ACTIONS_*, checked at submission, a 422 naming the first passed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, StringConstraints, model_validator

from scrapejobs_shared.extraction.css_selector import CssSelector
from scrapejobs_shared.extraction.field_types import JSON_INT
from scrapejobs_shared.options.render.viewport import Viewport

MAX_ACTIONS = 50
MAX_WAIT_MS = 60_000  # all waits of a page together
MAX_SCRIPT_CHARS = 100_000
ScriptText = Annotated[str, StringConstraints(min_length=1, max_length=MAX_SCRIPT_CHARS)]
PAPER = Literal["A0", "A1", "A2", "A3", "A4", "A5", "A6", "Letter", "Legal", "Tabloid", "Ledger"]


class _Action(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Wait(_Action):
    """A fixed wait, or until an element matches ``selector`` (within the job's timeout)."""

    type: Literal["wait"]
    milliseconds: Annotated[int, Field(ge=1, le=MAX_WAIT_MS), JSON_INT] | None = None
    selector: CssSelector | None = None

    @model_validator(mode="after")
    def _one(self) -> Wait:
        if (self.milliseconds is None) == (self.selector is None):
            raise ValueError("a wait takes milliseconds or a selector, one of them")
        return self


class Click(_Action):
    type: Literal["click"]
    selector: CssSelector
    all: bool = Field(default=False, description="Every element it matches, not the first")


class Write(_Action):
    """Text typed into the element that has the focus (click it first)."""

    type: Literal["write"]
    text: Annotated[str, StringConstraints(max_length=10_000)]


class Press(_Action):
    """A key pressed ("Enter", "Tab", "ArrowDown", "a", "Shift+Tab")."""

    type: Literal["press"]
    key: Annotated[str, StringConstraints(min_length=1, max_length=50)]


class Scroll(_Action):
    """The page (or the element ``selector`` matches) scrolled a screen up or down."""

    type: Literal["scroll"]
    direction: Literal["up", "down"] = "down"
    selector: CssSelector | None = None


class Screenshot(_Action):
    """The page as it is at this point, its viewport or the whole page; ``viewport`` resizes
    the page for this screenshot only."""

    type: Literal["screenshot"]
    full_page: bool = False
    quality: Annotated[int, Field(ge=1, le=100), JSON_INT] | None = None
    viewport: Viewport | None = None


class Scrape(_Action):
    """The page's URL and HTML as they are at this point."""

    type: Literal["scrape"]


class ExecuteJavascript(_Action):
    """A script run in the page (the body of an async function: ``return`` answers a value);
    its requests are the page's, checked as every other."""

    type: Literal["execute_javascript"]
    script: ScriptText


class Pdf(_Action):
    """The page printed to PDF."""

    type: Literal["pdf"]
    format: PAPER = "Letter"
    landscape: bool = False
    scale: float = Field(default=1.0, ge=0.1, le=2.0)


Action = Annotated[
    Wait | Click | Write | Press | Scroll | Screenshot | Scrape | ExecuteJavascript | Pdf,
    Discriminator("type"),
]


def waits_ms(actions: list[Action]) -> int:
    """What the fixed waits of ``actions`` add up to."""
    return sum(a.milliseconds or 0 for a in actions if isinstance(a, Wait))


@dataclass(frozen=True, slots=True)
class ActionLimits:
    """A deployment's limits on a page's actions (SCRAPEJOBS_ACTIONS_*)."""

    max_actions: int = 20
    max_wait_ms: int = 30_000
    max_script_chars: int = 10_000
    script_timeout_s: float = 5.0

    def first_passed(self, actions: list[Action]) -> tuple[str, str] | None:
        """The first limit ``actions`` pass: (the field, what it says), else None."""
        if len(actions) > self.max_actions:
            return "", f"at most {self.max_actions} actions (SCRAPEJOBS_ACTIONS_MAX)"
        if waits_ms(actions) > self.max_wait_ms:
            limit = self.max_wait_ms
            return "", f"waits add up to at most {limit} ms (SCRAPEJOBS_ACTIONS_MAX_WAIT_MS)"
        for index, action in enumerate(actions):
            if isinstance(action, ExecuteJavascript) and len(action.script) > self.max_script_chars:
                limit = self.max_script_chars
                return f"[{index}].script", (
                    f"a script of at most {limit} characters (SCRAPEJOBS_ACTIONS_MAX_SCRIPT_CHARS)"
                )
        return None
