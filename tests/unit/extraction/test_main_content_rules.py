"""The main-content stage's rules, each on the smallest page that needs it (the benchmark pages
that taught them: bench/README.md, "Main content")."""

from __future__ import annotations

from scrapejobs_shared.extraction import extract_page

PROSE = (
    "<p>{0} one: a paragraph long enough to be read as prose, with commas, clauses and a full"
    " stop at its end.</p><p>{0} two: another paragraph of the same kind, so that the content"
    " is written in paragraphs as articles are.</p>"
)


def _markdown(body: str, url: str = "https://e.test/story") -> str:
    page = f"<html><head><title>t</title></head><body>{body}</body></html>".encode()
    extraction = extract_page(page, content_type="text/html", url=url, formats=["markdown"])
    markdown = extraction.data["markdown"]
    assert isinstance(markdown, str), extraction.errors
    return markdown


def test_a_header_left_open_around_the_page_is_its_wrapper_not_its_chrome() -> None:
    markdown = _markdown("<header><nav><a href='/'>MENU</a></nav>" + PROSE.format("STORY"))
    assert "STORY one" in markdown and "STORY two" in markdown


def test_content_streamed_hidden_until_a_script_shows_it_is_kept() -> None:
    body = "<div hidden id='S:0'><h1>Title</h1>" + PROSE.format("STREAMED") + "</div>"
    body += "<div hidden class='menu-panel'><a href='/a'>PANEL</a></div>"
    markdown = _markdown(body)
    assert "STREAMED one" in markdown and "PANEL" not in markdown


def test_a_noscript_thread_is_read_and_a_noscript_notice_is_not() -> None:
    body = (
        "<noscript>Please enable JavaScript to use this site.</noscript>"
        "<div id='app'></div><noscript><div class='topic'>" + PROSE.format("THREAD") + "</div>"
        "</noscript>"
    )
    markdown = _markdown(body)
    assert "THREAD one" in markdown and "enable JavaScript" not in markdown


def _thread(itemtype: str) -> str:
    replies = "".join(
        f"<div class='comment'><p>REPLY{n}: a reply long enough to count as prose in a thread,"
        " with an opinion, a reason and an example from experience.</p></div>"
        for n in range(4)
    )
    return (
        f"<main><div class='topic' {itemtype}><h1>Question</h1><p>ASKED: how do I do this?</p>"
        f"<div class='comments'>{replies}</div></div></main>"
    )


def test_a_discussion_keeps_its_replies_and_an_article_drops_its_comments() -> None:
    schema = "itemscope itemtype='https://schema.org/DiscussionForumPosting'"
    assert "REPLY3" in _markdown(_thread(schema))
    assert "REPLY3" in _markdown(_thread(""), url="https://forum.e.test/t/how-do-i/42")
    article = "<main><article>" + PROSE.format("ARTICLE") + "</article>" + _thread("") + "</main>"
    markdown = _markdown(article)
    assert "ARTICLE one" in markdown and "REPLY0" not in markdown


def test_teaser_cards_inside_links_do_not_outweigh_the_article() -> None:
    teasers = "".join(
        f"<a href='/story/{n}'><div class='card'><p>TEASER{n}: the opening of another story,"
        " long enough to look like a paragraph of prose to a counter of characters.</p></div></a>"
        for n in range(12)
    )
    body = (
        "<div class='row'><div class='col'><h1>Title</h1>"
        + "".join(PROSE.format(f"ARTICLE{n}") for n in range(3))
        + "</div>"
        f"<div class='col'>{teasers}</div></div>"
    )
    markdown = _markdown(body)
    assert "ARTICLE0 one" in markdown and "ARTICLE2 two" in markdown
    assert "TEASER0" not in markdown and markdown.startswith("# Title")


def test_a_listing_keeps_its_links() -> None:
    items = "".join(f"<li><a href='/item/{n}'>ITEM{n} a course title</a></li>" for n in range(8))
    markdown = _markdown(f"<main><h1>Courses</h1><ul class='results'>{items}</ul></main>")
    assert all(f"ITEM{n}" in markdown for n in range(8))


def test_a_page_of_nothing_but_chrome_gives_empty_markdown() -> None:
    assert _markdown("<nav><a href='/'>Home</a></nav><footer>(c) 2026</footer>") in ("", "(c) 2026")


def test_segments_streamed_late_are_read_where_their_placeholders_are() -> None:
    # React's streamed rendering: each segment arrives hidden at the end of the body, and its
    # script moves it into the placeholder's place; each segment alone is a small share.
    sections = "".join(
        f"<h2>Part {n}</h2><template id='B:{n}'></template><div>Loading...</div>" for n in range(4)
    )
    segments = "".join(
        f"<div hidden id='S:{n}'>" + PROSE.format(f"PART{n}") + "</div>" for n in range(4)
    )
    menu = "<div class='site-links'>" + "".join(
        f"<p><a href='/s{n}'>Section {n} of the site</a></p>" for n in range(12)
    )
    markdown = _markdown(f"{menu}</div><main><h1>Guide</h1>{sections}</main>{segments}")
    for n in range(4):
        assert f"PART{n} one" in markdown
    order = [markdown.index(f"Part {n}") for n in range(4)]
    assert order == sorted(order)
    assert markdown.index("Part 1") < markdown.index("PART1 one") < markdown.index("Part 2")


def test_a_selects_options_are_never_content() -> None:
    options = "".join(f"<option>Research team number {n} of the lab</option>" for n in range(300))
    form = f"<form><select>{options}</select></form>"
    body = f"<main><h1>Topic</h1>{PROSE.format('TOPIC')}{form}</main>"
    markdown = _markdown(body)
    assert "TOPIC one" in markdown and "Research team" not in markdown


def test_a_dialog_goes_however_long_it_is() -> None:
    # A privacy policy in a modal outweighs a product grid; the wrapper guard keeps a large
    # header or hidden block, never a dialog over the page.
    policy = "".join(PROSE.format(f"POLICY{n}") for n in range(20))
    cards = "".join(f"<li><a href='/p/{n}'>Runner {n}</a> <span>$98</span></li>" for n in range(12))
    body = (
        f"<main><h1>Sneakers</h1><p>SNEAKERS for every day.</p><ul>{cards}</ul></main>"
        f"<footer><div role='dialog' aria-modal='true' id='privacy'>{policy}</div></footer>"
    )
    markdown = _markdown(body, url="https://shop.e.test/collections/sneakers")
    assert "Runner 11" in markdown and "SNEAKERS" in markdown
    assert "POLICY" not in markdown


def test_a_part_served_twice_is_read_once_and_a_repeated_paragraph_stays() -> None:
    signup = (
        "<div class='deal-box'><h3>Deals</h3><p>Get the editors' selected deals texted right"
        " to your phone, every morning, with no spam at all.</p></div>"
    )
    meal = (
        "<p>Breakfast: one cup of oats, half a cup of berries, a spoon of nut butter and tea.</p>"
    )
    article = f"<h2>Day one</h2>{meal}{PROSE.format('STORY')}{signup}<h2>Day two</h2>{meal}{signup}"
    body = f"<main><div class='copy'>{article}</div><div class='copy'>{article}</div></main>"
    markdown = _markdown(body)
    assert markdown.count("STORY one") == 1 and markdown.count("STORY two") == 1
    assert markdown.count("Get the editors") == 1
    assert markdown.count("Breakfast: one cup") == 2  # day one and day two of the one copy read


def test_what_is_hidden_from_screen_readers_only_is_still_read() -> None:
    # aria-hidden hides from assistive technology, not from the page's readers (a collapsed
    # answer's text, a card's summary); display: none and hidden do hide.
    answers = "".join(
        f"<h3>Question {n}?</h3><div aria-hidden='true'><p>ANSWER{n}: the answer to the"
        " question, long enough to be read as a sentence of the page.</p></div>"
        for n in range(3)
    )
    body = (
        f"<main><h1>Help</h1>{PROSE.format('INTRO')}{answers}"
        "<div style='display: none'><p>GONE: a panel shown only after a click, never on"
        " the page as it loads.</p></div></main>"
    )
    markdown = _markdown(body)
    assert all(f"ANSWER{n}" in markdown for n in range(3))
    assert "GONE" not in markdown


def test_panels_a_control_opens_are_read_and_other_hidden_blocks_are_not() -> None:
    # An accordion's or a tab's panels are hidden until their control is used: the reader
    # can open them, so they are content; a hidden block no control on the page opens is not.
    panels = "".join(
        f"<button aria-controls='panel-{n}'>Question {n}</button>"
        f"<div id='panel-{n}' hidden><p>PANEL{n}: the answer, long enough to be read as a"
        " sentence of the page.</p></div>"
        for n in range(3)
    )
    tab = "<div role='tabpanel' style='display:none'><p>TABBED: a second tab's text.</p></div>"
    body = (
        f"<main><h1>Help</h1>{PROSE.format('INTRO')}{panels}{tab}"
        "<div id='later' hidden><p>LATER: shown by a script at some point.</p></div></main>"
    )
    markdown = _markdown(body)
    assert all(f"PANEL{n}" in markdown for n in range(3)) and "TABBED" in markdown
    assert "LATER" not in markdown and "Question 1" not in markdown


def test_a_posts_author_card_and_reactions_and_screen_reader_text_are_not_the_thread() -> None:
    posts = "".join(
        f"<article class='message'><div class='message-userExtras'>Messages 1,2{n}4</div>"
        f"<h4 class='userTitle'>WELL-KNOWN MEMBER</h4><div class='message-content'>"
        f"<p>POST{n}: a reply long enough to count as prose in a thread, with a reason and"
        " an example from experience.</p></div><div class='reactions'>LIKED BY 3</div>"
        "<span class='visually-hidden'>SKIPPED: jump to the next post</span></article>"
        for n in range(3)
    )
    markdown = _markdown(f"<main><h1>Thread</h1>{posts}</main>", url="https://f.test/threads/9")
    assert all(f"POST{n}" in markdown for n in range(3))
    for furniture in ("Messages 1,2", "WELL-KNOWN", "LIKED BY", "SKIPPED"):
        assert furniture not in markdown


def test_an_ad_is_named_by_its_first_word_not_by_a_modifier_ending_in_ad() -> None:
    grids = "".join(
        f"<h2>Section {n}</h2><div class='Grid-items hide-read-more-ad'>"
        f"<p>STORY{n}: a story's summary long enough to be read as prose on a section page.</p>"
        "</div>"
        for n in range(3)
    )
    ad = "<div class='ad-slot'><p>BUY NOW: the sponsor's offer, long enough to be prose.</p></div>"
    markdown = _markdown(f"<main><h1>Science</h1>{grids}{ad}</main>")
    assert all(f"STORY{n}" in markdown for n in range(3)) and "BUY NOW" not in markdown


def test_code_is_kept_whole_whatever_its_highlighters_classes_say() -> None:
    code = (
        "<pre><code class='hljs bash'><span class='hljs-comment'># FETCH the remote branch"
        "</span>\ngit pull --rebase origin main\n<span class='hljs-comment share'># SHARE it with"
        " the others</span>\ngit push --force-with-lease origin main"
        "</code></pre>"
    )
    markdown = _markdown(f"<main><h1>Git</h1>{PROSE.format('INTRO')}{code}</main>")
    assert "# FETCH the remote branch" in markdown and "# SHARE it" in markdown
    assert "git pull" in markdown
    twice = _markdown(
        f"<main><h1>Git</h1>{PROSE.format('INTRO')}{code}<p>Then again:</p>{code}</main>"
    )
    assert twice.count("# FETCH the remote branch") == 2


def test_a_section_with_a_paragraph_is_not_a_link_block_however_many_links_it_has() -> None:
    patches = "".join(
        f"<li><a href='https://lists.test/p{n}'>libjit: allow casts between types {n}</a></li>"
        for n in range(8)
    )
    section = (
        "<div class='sect'><h2>Patches</h2><p>There has been some nice PROGRESS on the"
        f" compiler's side these past months, and these patches were merged:</p><ul>{patches}"
        "</ul></div>"
    )
    related = "<div>" + "".join(f"<a href='/post/{n}'>Older post {n}</a> " for n in range(5))
    news = PROSE.format("NEWS") + PROSE.format("MORE") + PROSE.format("LAST")
    body = f"<main><article><h1>Report</h1>{news}{section}{related}</div>"
    markdown = _markdown(body + "</article></main>")
    assert "PROGRESS" in markdown and "Older post" not in markdown


def test_an_article_beside_a_feed_of_articles_is_the_content() -> None:
    """An ``<article>`` holding teaser articles ("you may also like") outweighing the page's
    article is a feed, not the page's content."""
    teaser = "<article><p>TEASER{0} " + "a teaser paragraph long enough to count as prose. " * 6
    feed = "<article><h3>You may like</h3>" + "".join(
        teaser.format(n) + "</p></article>" for n in range(6)
    )
    body = "<article><h1>Title</h1>" + PROSE.format("STORY") + "</article>" + feed + "</article>"
    markdown = _markdown(body)
    assert "STORY one" in markdown and "TEASER" not in markdown


def test_an_ad_label_alone_on_its_line_is_not_content() -> None:
    body = "<article>" + PROSE.format("STORY") + "<div><span>Advertisement</span></div>"
    body += "<p>Advert</p>" + PROSE.format("MORE") + "</article>"
    markdown = _markdown(body)
    assert "STORY one" in markdown and "MORE two" in markdown
    assert "Advertisement" not in markdown and "Advert\n" not in markdown + "\n"
