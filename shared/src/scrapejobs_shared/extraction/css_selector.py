"""A CSS selector of elements, as a browser's ``querySelector`` takes it (render's
``wait_for``, Firecrawl's tags, browser actions' targets)."""

from __future__ import annotations

from typing import Annotated

from cssselect import GenericTranslator, SelectorError
from pydantic import AfterValidator, StringConstraints


def check_css_selector(selector: str) -> str:
    """A CSS selector of elements (no ``::text``-style pseudo-elements) that a browser's
    ``querySelector`` would take: checked with cssselect, which parsel uses too."""
    if "::" in selector:
        raise ValueError("a selector must select elements, not a pseudo-element")
    try:
        GenericTranslator().css_to_xpath(selector)
    except SelectorError as exc:
        raise ValueError(f"invalid CSS selector: {exc}") from None
    return selector


CssSelector = Annotated[
    str, StringConstraints(min_length=1, max_length=500), AfterValidator(check_css_selector)
]
