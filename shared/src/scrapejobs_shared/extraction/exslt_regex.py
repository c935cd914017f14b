"""EXSLT's regular-expression functions for XPath (``re:test``, ``re:match``,
``re:replace``), on RE2 instead of lxml's own (which run Python's backtracking ``re``).

They behave as lxml's: the string arguments take a node-set's first node's text, flags
``i`` (ignore case) and ``g`` (every match) apply, ``re:match`` gives ``<match>`` elements
(the whole match, then each group; with ``g`` one per match). Patterns follow
:mod:`scrapejobs_shared.extraction.user_regex`; one RE2 cannot take fails the field with the
reason, as an XPath error does.
"""

from __future__ import annotations

from typing import Any

from lxml import etree  # type: ignore[import-untyped]

from scrapejobs_shared.extraction.user_regex import UserRegex, user_regex

REGEX_NAMESPACE = "http://exslt.org/regular-expressions"


def _string(value: Any) -> str:
    """An XPath argument as a string (a node-set is its first node's string value)."""
    if isinstance(value, str):
        return str(value)
    if isinstance(value, list):
        if not value:
            return ""
        first = value[0]
        if isinstance(first, str):
            return str(first)
        if isinstance(getattr(first, "tag", None), str):
            return "".join(first.itertext())
        return str(first)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _compiled(pattern: Any, flags: Any) -> UserRegex:
    return user_regex(_string(pattern), ignore_case="i" in _string(flags))


def _test(_context: Any, text: Any, pattern: Any, flags: Any = "") -> bool:
    return _compiled(pattern, flags).search(_string(text)) is not None


def _match(_context: Any, text: Any, pattern: Any, flags: Any = "") -> list[Any]:
    regex = _compiled(pattern, flags)
    subject = _string(text)
    if "g" in _string(flags):
        found = [match.group(0) or "" for match in regex.finditer(subject)]
    else:
        match = regex.search(subject)
        if match is None:
            return []
        found = [match.group(0) or "", *(group or "" for group in match.groups(""))]
    root = etree.Element("matches")
    elements = []
    for value in found:
        element = etree.SubElement(root, "match")
        element.text = value
        elements.append(element)
    return elements


def _replace(_context: Any, text: Any, pattern: Any, flags: Any, replacement: Any) -> str:
    regex = _compiled(pattern, flags)
    count = 0 if "g" in _string(flags) else 1
    return regex.sub(_string(replacement), _string(text), count=count)


FUNCTIONS = {
    (REGEX_NAMESPACE, "test"): _test,
    (REGEX_NAMESPACE, "match"): _match,
    (REGEX_NAMESPACE, "replace"): _replace,
}
