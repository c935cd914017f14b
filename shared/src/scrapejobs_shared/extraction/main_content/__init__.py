"""What a reader would call a page's content: the article, the product, the thread, the listing,
without the site's chrome, related lists, consent and promotion blocks.

:func:`main_content` cuts a copy of the parsed page down to it, in three steps, each measured
on the public benchmarks (bench/content_quality.py, bench/README.md "Main content"):

1. **What is never content** goes (:mod:`.boilerplate`): scripts, styles, embedded objects,
   form controls, hidden elements, the page's navigation, banner, footer and asides (tags and
   landmark roles), elements whose class or id names boilerplate (cookie, share, related,
   sidebar, comments...), each unless it holds most of the page's text (then it is the page's
   wrapper, not its chrome). A ``<noscript>`` holding real text stays (forums serve their
   thread there to readers without scripts).
2. **The container** (:mod:`.container`): where the page says its content is (schema.org's
   ``articleBody``, a lone ``<article>``, ``<main>``, a content management system's content
   class) when that holds a good share of the page's prose, else the body; from there, down
   into the child holding nearly all the prose (:mod:`.survey`: text outside links, a block's
   short text counting less) while one child does.
3. **Inside the container**, blocks made of links (related articles, tag clouds, share bars)
   go, unless the container itself is mostly links (a listing).
"""

from __future__ import annotations

from typing import Any

from .boilerplate import open_noscripts, remove_boilerplate, strip_never_content
import os
from .container import container_of, focus, link_blocks
from .discussion import is_discussion
from .survey import Survey, drop

__all__ = ["main_content"]


def main_content(doc: Any, url: str = "") -> Any | None:
    """``doc``'s main content (an element of it), or None when the page has no text; ``doc``
    is cut down in place (pass a copy). ``url``: where the page was found (it may say the page
    is a discussion, whose replies are content)."""
    body = doc.find(".//body")
    if body is None:
        body = doc
    discussion = is_discussion(doc, url)
    strip_never_content(doc)
    open_noscripts(body)
    survey = Survey(body)
    if survey.text(body) == 0:
        return None
    remove_boilerplate(body, survey, discussion=discussion)
    container = container_of(body, survey)
    if os.environ.get("FOCUS", "1") == "1":
        container = focus(container, survey)
    if survey.links(container) < 0.5 * survey.text(container):
        drop(link_blocks(container, survey))
    return container
