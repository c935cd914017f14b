"""``content``: which part of a page the markdown and clean_html formats give (the page's main
content, the elements some selectors match, less those others match).

| Firecrawl | native |
|---|---|
| ``onlyMainContent`` | ``options.content.main_only`` |
| ``includeTags``, ``excludeTags`` | ``options.content.include``, ``options.content.exclude`` |"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from scrapejobs_shared.extraction.content_scope import ContentScope
from scrapejobs_shared.extraction.css_selector import CssSelector

from .option_family import OptionFamily, ServedHere

MAX_INCLUDED = 20
MAX_EXCLUDED = 50


class ContentOptions(BaseModel):
    """Which part of a page the markdown and clean_html formats give."""

    model_config = ConfigDict(extra="forbid", strict=True)

    main_only: bool = Field(
        default=True,
        description="Leave out navigation, asides, forms, the page's header and footer and "
        "consent banners",
    )
    include: list[CssSelector] = Field(
        default_factory=list,
        max_length=MAX_INCLUDED,
        description="CSS selectors: only the elements they match (in document order)",
    )
    exclude: list[CssSelector] = Field(
        default_factory=list,
        max_length=MAX_EXCLUDED,
        description="CSS selectors of elements left out",
    )

    def scope(self) -> ContentScope:
        return ContentScope(self.main_only, tuple(self.include), tuple(self.exclude))


class Content(OptionFamily):
    name = "content"
    native_fields = {
        "options": {
            "content": (
                ContentOptions,
                Field(
                    default_factory=ContentOptions,
                    description="Which part of the page markdown and clean_html give",
                ),
            )
        }
    }
    firecrawl_fields = {
        "scrape_options": {
            "include_tags": (
                list[CssSelector] | None,
                Field(default=None, max_length=MAX_INCLUDED),
            ),
            "exclude_tags": (
                list[CssSelector] | None,
                Field(default=None, max_length=MAX_EXCLUDED),
            ),
            "only_main_content": (bool, Field(default=True)),
        }
    }
    firecrawl_names = {
        "options.content.include": "includeTags",
        "options.content.exclude": "excludeTags",
    }

    def of(self, options: Any) -> ContentOptions:
        found: ContentOptions = options.content
        return found

    def options_to_native(self, given: BaseModel, native: dict[str, Any], here: ServedHere) -> None:
        native["content"] = {
            "main_only": getattr(given, "only_main_content", True),
            "include": getattr(given, "include_tags", None) or [],
            "exclude": getattr(given, "exclude_tags", None) or [],
        }


CONTENT = Content()
