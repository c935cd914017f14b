"""The page's title as its body shows it: the heading a reader takes for the page's name (the
product's, the article's headline, the thread's, the category's).

:func:`title_heading` picks, among the ``<h1>`` and ``<h2>`` outside the site's chrome (its
navigation, asides and menus, the page's own header and footer unless inside an ``<article>``
or ``<main>``, landmark roles), the first ``<h1>`` that the document's title (:mod:`.declared`)
names, else the first such ``<h2>`` (forums such as phpBB give the site's name the ``<h1>``),
else the first ``<h1>``. Looked for before anything is removed: a theme's header class
(``entry-header``, ``p-body-header``) names the headline's wrapper like chrome, so the walk
that removes boilerplate is told to keep the heading's ancestors (:func:`keep_set`).
"""

from __future__ import annotations

import re
from typing import Any

from lxml import etree  # type: ignore[import-untyped]

from .boilerplate import CHROME, CHROME_ROLES, PAGE_CHROME

MAX_HEADINGS = 200  # looked at, in document order
NAMED_SHARE = 0.6  # of a heading's words the document's title must hold to name it

_H1 = etree.XPath("descendant::h1", smart_strings=False)
_H2 = etree.XPath("descendant::h2", smart_strings=False)
_WORD = re.compile(r"\w+")


def title_heading(body: Any, title: str) -> Any | None:
    """The heading of ``body`` a reader takes for the page's title (see the module's
    docstring), or None; ``title``: the document's title (Open Graph's, else ``<title>``)."""
    title_words = set(_WORD.findall(title.casefold()))
    first_h1 = None
    for heading in _H1(body)[:MAX_HEADINGS]:
        named = _named(heading, title_words)
        if named:
            return heading
        if named is not None and first_h1 is None:
            first_h1 = heading
    for heading in _H2(body)[:MAX_HEADINGS]:  # the <h2> only when no <h1> is named
        if _named(heading, title_words):
            return heading
    return first_h1


def _named(heading: Any, title_words: set[str]) -> bool | None:
    """Whether the document's title (its ``title_words``) names ``heading``; None for a
    heading without words or in the chrome."""
    words = _WORD.findall("".join(heading.itertext()).casefold())
    if not words or _in_chrome(heading):
        return None
    return sum(w in title_words for w in words) >= NAMED_SHARE * len(words)


def keep_set(heading: Any | None) -> frozenset[Any]:
    """``heading`` and its ancestors: never removed as chrome for their names."""
    if heading is None:
        return frozenset()
    return frozenset([heading, *heading.iterancestors()])


def _in_chrome(heading: Any) -> bool:
    inside_content = False
    for ancestor in heading.iterancestors():
        tag = ancestor.tag
        if tag in ("article", "main") or ancestor.get("role") == "main":
            inside_content = True
        if tag in CHROME or ancestor.get("role") in CHROME_ROLES:
            return True
    if not inside_content:
        return any(a.tag in PAGE_CHROME for a in heading.iterancestors())
    return False
