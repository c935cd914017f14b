"""Running a field's CSS or XPath selector on the parsed tree, and reading what it matched.

Selectors are compiled once per process (CSS is translated to XPath by parsel's own
translators, so the semantics are parsel's, including ``::text``, ``::attr(name)`` and the
``has-class()`` / EXSLT ``re:`` functions) and evaluated straight on lxml nodes: the page's
parsel ``Selector`` is built once and no per-match ``Selector`` objects are created.

What a match reads as (:func:`node_string`):

* an element: its visible text on one line, whitespace normalised (see
  :mod:`.visible_text`; in XML every text node counts, joined by spaces); select
  ``::text`` / ``text()`` or an attribute for raw strings;
* a text node or attribute (``::text``, ``::attr(x)``, ``text()``, ``@x``): the string as
  selected, stripped of surrounding whitespace. In HTML, URL attributes
  (:data:`URL_ATTRIBUTES`, e.g. ``href``, ``src``) are resolved to absolute URLs against
  the document's base URL (``<base href>``, else the final URL after redirects); ``re``
  and ``type`` then apply to the absolute URL;
* a comment or processing instruction: its text, stripped;
* an XPath number, string or boolean (``count(...)``, ``string(...)``): its text; whole
  numbers print without ``.0``, booleans as ``true``/``false``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from lxml import etree  # type: ignore[import-untyped]
from parsel.csstranslator import GenericTranslator, HTMLTranslator

from scrapejobs_shared.errors import WorkFailed
from scrapejobs_shared.extraction.user_regex import UnsupportedRegex

from .exslt_regex import FUNCTIONS as EXSLT_REGEX_FUNCTIONS
from .visible_text import element_text, xml_text

EXSLT_NAMESPACES = {
    "re": "http://exslt.org/regular-expressions",
    "set": "http://exslt.org/sets",
}
URL_ATTRIBUTES = frozenset(
    {"href", "src", "action", "formaction", "poster", "cite", "data", "background",
     "longdesc", "manifest", "icon", "codebase", "usemap"}
)  # fmt: skip

_HTML_CSS = HTMLTranslator()
_XML_CSS = GenericTranslator()


class SelectionError(WorkFailed, ValueError):
    """A selector that failed on this document (compilation or evaluation)."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


def selector_xpath(*, css: str | None, xpath: str | None, xml: bool) -> str:
    """The XPath a field's selector amounts to (CSS translated the way parsel does)."""
    if css is not None:
        translator = _XML_CSS if xml else _HTML_CSS
        return str(translator.css_to_xpath(css))
    if xpath is None:
        raise SelectionError("no selector")
    return xpath


@lru_cache(maxsize=2048)
def compiled_xpath(expression: str) -> Any:
    """An lxml ``XPath`` evaluator, cached (lxml serialises concurrent use of one).

    Compiling never evaluates anything. lxml's own EXSLT regular expressions (Python's
    backtracking ``re``) are off; ``re:test``, ``re:match`` and ``re:replace`` are
    :mod:`.exslt_regex`'s, on RE2."""
    try:
        return etree.XPath(
            expression,
            namespaces=EXSLT_NAMESPACES,
            extensions=EXSLT_REGEX_FUNCTIONS,
            regexp=False,
            smart_strings=True,
        )
    except (etree.XPathError, ValueError) as exc:  # ValueError: a NUL or control character
        raise SelectionError(f"invalid XPath {expression!r}: {exc}", str(exc)) from None


def check_xpath(expression: str) -> None:
    """Raise :class:`SelectionError` when ``expression`` does not compile (nothing is run)."""
    compiled_xpath(expression)


def select(expression: str, context: Any) -> list[Any]:
    """Evaluate an XPath expression with ``context`` (an lxml element) as context node."""
    try:
        result = compiled_xpath(expression)(context)
    except etree.XPathError as exc:
        raise SelectionError(f"XPath failed: {exc}") from None
    except UnsupportedRegex as exc:
        raise SelectionError(f"XPath failed: {exc}") from None
    return result if isinstance(result, list) else [result]


def is_element(node: Any) -> bool:
    return isinstance(getattr(node, "tag", None), str)


def is_whitespace_text(node: Any) -> bool:
    """A whitespace-only text node (indentation between tags)."""
    return isinstance(node, str) and getattr(node, "is_text", False) and not node.strip()


def node_string(
    node: Any, resolve_url: Callable[[str], str] | None = None, *, xml: bool = False
) -> str:
    """What a selected node reads as (see the module docstring)."""
    if isinstance(node, str):
        if resolve_url is not None and getattr(node, "is_attribute", False):
            name = str(getattr(node, "attrname", "")).rpartition("}")[2].lower()
            if name in URL_ATTRIBUTES:
                return resolve_url(node)
        return str(node).strip()
    if isinstance(node, bool):
        return "true" if node else "false"
    if isinstance(node, float):
        return str(int(node)) if node.is_integer() else repr(node)
    tag = getattr(node, "tag", None)
    if isinstance(tag, str):
        return xml_text(node, " ") if xml else element_text(node)
    if tag is not None:  # comment or processing instruction
        return str(node.text or "").strip()
    return str(node).strip()
