"""What a reader would call a page's content: the article, the product, the thread, the listing,
without the site's chrome, related lists, comments under an article, consent and promotion
blocks.

:func:`main_content` cuts a copy of the page's body down to it, in steps each measured on the
public benchmarks (bench/content_quality.py; bench/README.md, "Main content"):

0. **What the page says of itself** (:mod:`.declared`, from the whole document): its kind
   (:mod:`.page_kind`), its title, and the facts of the product, job or event its schema.org
   data declares; and **its title heading** (:mod:`.title`), found before anything goes.
1. **What is never content** goes (:mod:`.boilerplate`), once the segments a streamed
   rendering sent late are in their places: scripts, styles, embedded objects, form
   controls, hidden elements, ad labels, the page's navigation, banner, footer and asides
   (tags and landmark roles), elements whose class or id names boilerplate (cookie, share,
   related, sidebar, upsell, button...), comments unless the page is a discussion whose
   replies outweigh the rest (a product's reviews are comments); each unless it holds most
   of the page's prose (then it is the page's wrapper, not its chrome) or the title heading
   (a theme's ``entry-header`` holds the headline). A ``<noscript>`` holding real text stays
   (forums serve their thread there to readers without scripts). Measures come from
   :mod:`.survey`: text, links and **prose** (text outside links, a short block's counting
   less) of every element.
2. **The container** (:mod:`.container`): where the page says its content is (schema.org's
   ``articleBody``, a lone or leading ``<article>`` (one holding articles beside it is a
   feed of teasers, left out of the reckoning), ``<main>``, a content management system's
   content class) when that holds a good share of the prose, else the body; from there, down
   into the child holding nearly all the prose while one does; then the element holding nearly
   all its paragraphs, when paragraphs are what it is written in (an article beside teasers).
3. **Its head** (:mod:`.head`): widened to the title heading when that costs a headline's
   worth, or a product's header facts beside a price; else the title's block (its byline and
   date) above it; a listing's name widened to its cards (:func:`.container.listing_of`).
4. **Inside it**, blocks made of links (related articles, tag clouds, share bars, jump
   links) go, unless the container itself is mostly links (a listing), so do parts repeating
   an earlier part word for word (an article served twice, a sign-up box in every section),
   and links with no text (an image's, which markdown leaves out: they would read as their
   URL).
5. **Under its head**: the title's block, or the document's title when the page has no title
   heading, and the declared facts the content does not show (:func:`.head.headed`).

:func:`without_boilerplate` is step 1 alone (``include`` selectors with main content on).
"""

from __future__ import annotations

from typing import Any

from .boilerplate import open_noscripts, place_streamed, remove_boilerplate, strip_never_content
from .container import Anchors, container_of, focus, link_blocks, listing_of, repeated_parts
from .declared import UNDECLARED, Declared, declared
from .fact import Fact
from .head import headed, widened
from .page_kind import PageKind, page_kind
from .survey import Survey, drop
from .title import keep_set, title_heading

__all__ = [
    "UNDECLARED",
    "Declared",
    "Fact",
    "PageKind",
    "declared",
    "main_content",
    "page_kind",
    "without_boilerplate",
]


def main_content(doc: Any, *, page: Declared = UNDECLARED) -> Any | None:
    """``doc``'s main content (an element of it, or one made to hold it under its head), or
    None when the page has no text; ``doc`` (a page or its body) is cut down in place: pass a
    copy. ``page``: what the whole page says of itself (:func:`declared`: its kind, title and
    schema.org facts)."""
    body = _body(doc)
    title = title_heading(body, page.title)  # where it is, before removals
    cleaned = _without_boilerplate(body, page.kind, keep_set(title))
    if cleaned is None:
        return None
    survey, anchors = cleaned
    container = focus(container_of(body, survey, anchors), survey)
    if title is not None and not any(a is body for a in title.iterancestors()):
        title = None  # removed with what held it (hidden)
    container, block = widened(container, title, survey, body, facts=bool(page.facts))
    listing = None if page.kind is PageKind.PRODUCT else listing_of(container, title, survey)
    if listing is not None:  # its cards are the content, links as they are
        container = listing
    elif survey.links(container) < 0.5 * survey.text(container):
        drop(link_blocks(container, survey))
    drop(repeated_parts(container, survey))
    # A link with no text (around an image, which markdown leaves out) would read as its URL.
    drop([a for a in container.iter("a") if survey.text(a) == 0 and a is not container])
    return headed(container, block, page.title if title is None else "", page.facts, title)


def without_boilerplate(doc: Any, *, kind: PageKind = PageKind.OTHER) -> None:
    """Step 1 alone: ``doc`` (a page, or an element of one: never removed itself) without
    what is never content, in place."""
    _without_boilerplate(_body(doc), kind, frozenset())


def _without_boilerplate(
    body: Any, kind: PageKind, keep: frozenset[Any]
) -> tuple[Survey, Anchors] | None:
    place_streamed(body)
    strip_never_content(body)
    open_noscripts(body)
    survey = Survey(body)
    if survey.text(body) == 0:
        return None
    anchors = Anchors()
    remove_boilerplate(body, survey, kind=kind, noticed=anchors.see, keep=keep)
    return survey, anchors


def _body(doc: Any) -> Any:
    if doc.tag == "body":
        return doc
    body = doc.find(".//body")
    return doc if body is None else body
