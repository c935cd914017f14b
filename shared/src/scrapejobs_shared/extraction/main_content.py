"""What a reader would call a page's content: the article, the product, the thread, the listing,
without the site's chrome, related lists, comment threads under an article, consent and
promotion blocks.

:func:`main_content` cuts a copy of the parsed page down to it, in three steps, each measured
on the public benchmarks (bench/content_quality.py):

1. **What is never content** goes: scripts, styles, forms' controls, hidden elements, the
   page's navigation, banner, footer and asides (landmark tags and roles), and elements whose
   class or id names boilerplate (``boilerplate_names``) unless they hold most of the page's
   text. A ``<noscript>`` holding real text stays (some forums serve their thread there).
2. **The container**: from the body, go down into the child holding most of the text weight
   (text outside links) while one child holds nearly all of it.
3. **Inside the container**, blocks made of links (related articles, tag clouds, share bars)
   go, unless the container itself is a listing (mostly links).
"""

from __future__ import annotations

import re
from typing import Any

from lxml import etree  # type: ignore[import-untyped]

# Elements whose content is never text a reader reads.
_NEVER = etree.XPath(
    "//script | //style | //template | //svg | //math | //iframe | //object | //embed"
    " | //canvas | //head | //link | //meta | //input | //textarea | //comment()"
    " | //processing-instruction()",
    smart_strings=False,
)
# Controls and hidden elements: gone unless they hold most of the page's text (a button left
# open by broken markup swallows the page; streamed server rendering keeps its parts hidden
# until a script moves them into place).
_CONTROLS_AND_HIDDEN = etree.XPath(
    "//button | //select | //option | //datalist | //dialog"
    " | //*[@hidden or @aria-hidden='true'"
    " or contains(translate(@style, ' ', ''), 'display:none')"
    " or contains(translate(@style, ' ', ''), 'visibility:hidden')]",
    smart_strings=False,
)
_NOSCRIPT = etree.XPath("//noscript", smart_strings=False)
_CHROME = etree.XPath(
    "//nav | //aside | //menu"
    " | //header[not(ancestor::article or ancestor::main)]"
    " | //footer[not(ancestor::article or ancestor::main)]"
    " | //*[@role='navigation' or @role='banner' or @role='contentinfo'"
    " or @role='complementary' or @role='dialog' or @role='alertdialog' or @role='menu'"
    " or @role='menubar' or @role='search' or @role='toolbar']",
    smart_strings=False,
)
_NAMED = etree.XPath("//*[@class or @id]", smart_strings=False)

# Class and id words that name boilerplate (matched as whole words of the name, split at
# anything not a letter or digit).
_BOILERPLATE = re.compile(
    r"(?:^|[^a-z0-9])("
    r"cookie|cookies|consent|gdpr|newsletter|subscribe|subscription|signup|share|sharing"
    r"|social|breadcrumb|breadcrumbs|pagination|pager|sidebar|related|recommended"
    r"|recommendations|promo|promotion|advert|advertisement|ads|ad|sponsor|sponsored|popup"
    r"|modal|skip|navbar|nav|navigation|menu|footer|masthead|header|toolbar|banner"
    r"|outbrain|taboola|disqus|comments|comment|respond"
    r")(?:$|[^a-z0-9])"
)
# Words that say an element is content even when it also names boilerplate.
_CONTENT = re.compile(
    r"(?:^|[^a-z0-9])(content|article|main|body|post|entry|story|text)(?:$|[^a-z0-9])"
)
# What the container may be (a paragraph, a heading or a link never is).
_CONTAINERS = frozenset(
    {"div", "section", "main", "article", "form", "center", "table", "tbody", "tr", "td"}
    | {"ul", "ol", "dl", "font", "span", "body", "html"}
)
_BLOCKS = frozenset({"div", "section", "ul", "ol", "table", "p", "dl", "span"})


def main_content(doc: Any) -> Any | None:
    """``doc``'s main content (an element of it), or None when the page has no text; ``doc``
    is cut down in place (pass a copy)."""
    body = doc.find(".//body")
    if body is None:
        body = doc
    _drop(_NEVER(doc))
    for element in _NOSCRIPT(doc):
        if len((element.text_content() or "").strip()) < 200:
            _drop([element])
        else:
            element.drop_tag()
    weights = _Weights(body)
    total = weights.text(body)
    if total == 0:
        return None
    _drop([e for e in _CONTROLS_AND_HIDDEN(body) if weights.text(e) < 0.4 * total])
    # Chrome never holds most of a page's text: an element that does is the page's wrapper.
    _drop([e for e in _CHROME(body) if weights.text(e) < 0.4 * total])
    named = [
        e
        for e in _NAMED(body)
        if e is not body and _names_boilerplate(e) and weights.text(e) < 0.4 * total
    ]
    _drop(named)
    weights = _Weights(body)
    container = _container(body, weights)
    if weights.links(container) < 0.5 * weights.text(container):
        _drop_link_blocks(container, weights)
    return container


def _names_boilerplate(element: Any) -> bool:
    name = f"{element.get('class', '')} {element.get('id', '')}".lower()
    return bool(_BOILERPLATE.search(name)) and not _CONTENT.search(name)


def _container(body: Any, weights: _Weights) -> Any:
    node = body
    while True:
        own = weights.content(node)
        best = None
        best_weight = -1
        for child in node:
            if not isinstance(child.tag, str):
                continue
            w = weights.content(child)
            if child.tag not in _CONTAINERS:
                if w > 0.25 * own:  # a heading, a paragraph: the content starts here
                    return node
                continue
            if w > best_weight:
                best, best_weight = child, w
        if best is None or best_weight < 0.75 * own:
            return node
        node = best


def _drop_link_blocks(container: Any, weights: _Weights) -> None:
    doomed = []
    for element in container.iter():
        if element is container or element.tag not in _BLOCKS:
            continue
        text = weights.text(element)
        if text and weights.links(element) > 0.6 * text and len(element.findall(".//a")) >= 3:
            doomed.append(element)
    _drop(doomed)


class _Weights:
    """Each element's text length and the part of it inside links, summed bottom-up once."""

    def __init__(self, top: Any) -> None:
        self._text: dict[Any, int] = {}
        self._links: dict[Any, int] = {}
        self._keep = elements = [e for e in top.iter() if isinstance(e.tag, str)]
        for element in reversed(elements):
            text = len((element.text or "").strip())
            links = 0
            for child in element:
                if not isinstance(child.tag, str):
                    continue
                text += self._text.get(child, 0) + len((child.tail or "").strip())
                links += self._links.get(child, 0)
            self._text[element] = text
            self._links[element] = text if element.tag == "a" else links

    def text(self, element: Any) -> int:
        return self._text.get(element, 0)

    def links(self, element: Any) -> int:
        return self._links.get(element, 0)

    def content(self, element: Any) -> int:
        return self._text.get(element, 0) - self._links.get(element, 0)


def _drop(elements: Any) -> None:
    """Remove each element, keeping the text that follows it."""
    for element in elements:
        parent = element.getparent()
        if parent is None:
            continue
        tail = element.tail
        if tail:
            previous = element.getprevious()
            if previous is not None:
                previous.tail = (previous.tail or "") + tail
            else:
                parent.text = (parent.text or "") + tail
        parent.remove(element)
