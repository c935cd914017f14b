"""The ``attributes`` format (Firecrawl's): for each ``{"selector", "attribute"}`` asked for,
the values of that attribute on every element the CSS selector matches, in document order, as
written in the page (not resolved; an element without the attribute gives nothing):
``[{"selector", "attribute", "values": [...]}]``.

Selectors are checked when the job is submitted (CSS that parsel translates); they run in the
extraction processes under the page's CPU budget like the job's fields. At most
:data:`MAX_VALUES` values a selector (the result's ``errors`` says when a list was cut)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator

from ..selection import SelectionError, is_element, select, selector_xpath
from .page_format import FormatOptions, FormatUnavailable, Page, PageFormat, Produced

MAX_SELECTORS = 100
MAX_VALUES = 10_000
ATTRIBUTE_NAME = r"^[^\s\"'>/=\x00-\x1f]{1,200}$"  # what HTML allows in an attribute's name


class AttributeSelector(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    selector: str = Field(min_length=1, max_length=2000, description="A CSS selector")
    attribute: Annotated[str, Field(pattern=ATTRIBUTE_NAME)] = Field(
        description="The attribute whose values are read (e.g. href, data-id)"
    )

    @field_validator("selector")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            selector_xpath(css=value, xpath=None, xml=False)
        except Exception as exc:  # cssselect raises several error types
            raise ValueError(f"invalid CSS selector: {exc}") from None
        return value


class AttributesOptions(FormatOptions):
    """``{"type": "attributes", "selectors": [{"selector": "a.story", "attribute": "href"}]}``"""

    type: Literal["attributes"]
    selectors: list[AttributeSelector] = Field(min_length=1, max_length=MAX_SELECTORS)


class Attributes(PageFormat):
    name = "attributes"
    firecrawl = "attributes"
    options = AttributesOptions
    description = "attribute values of the elements CSS selectors match"

    def produce(self, page: Page, options: FormatOptions | None) -> Produced:
        assert isinstance(options, AttributesOptions)
        found: list[JsonValue] = []
        cut: list[str] = []
        for wanted in options.selectors:
            expression = selector_xpath(css=wanted.selector, xpath=None, xml=False)
            try:
                nodes = select(expression, page.root)
            except SelectionError as exc:
                raise FormatUnavailable(f"{wanted.selector!r}: {exc.reason}") from None
            values: list[JsonValue] = [
                value
                for node in nodes
                if is_element(node) and (value := node.get(wanted.attribute)) is not None
            ]
            if len(values) > MAX_VALUES:
                values = values[:MAX_VALUES]
                cut.append(wanted.selector)
            found.append(
                {"selector": wanted.selector, "attribute": wanted.attribute, "values": values}
            )
        note = f"more than {MAX_VALUES} values for {cut}; kept the first {MAX_VALUES}"
        return Produced(found, note if cut else None)
