"""Pages of each kind the main-content stage must read as a person would, written the way the
web writes them (a CMS's classes, landmarks where sites use them, chrome where it sits), served
by the test site at ``/kinds/KIND`` (support/site.py).

Each page's content carries words starting ``KEEP`` and its boilerplate words starting
``DROP``: a test asserts every ``KEEP`` word in the markdown and no ``DROP`` word. A headline
(the article's, the listing's) carries neither: the markdown starts with it, which tests say
where it matters (support/page_shapes.py holds the pages of common platforms).
"""

from __future__ import annotations

import re

_HEAD = (
    "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{title}</title>"
    "<script>window.DROPSCRIPT = 1;</script><style>.DROPSTYLE{{color:red}}</style></head><body>"
    "<div id='cookie-consent' class='consent-banner'>DROPCOOKIE We use cookies."
    " <button>Accept all</button></div>"
    "<header class='site-header'><a href='/' class='logo'>DROPLOGO Site</a>"
    "<nav class='main-nav'><ul><li><a href='/a'>DROPNAV Home</a></li>"
    "<li><a href='/b'>DROPNAV Shop</a></li><li><a href='/c'>DROPNAV Blog</a></li></ul></nav>"
    "</header>"
)
_FOOT = (
    "<footer class='site-footer'><div class='footer-links'><a href='/about'>DROPFOOTER About</a>"
    " <a href='/privacy'>DROPFOOTER Privacy</a></div><p>DROPFOOTER Copyright 2026 Example Inc."
    " All rights reserved, every one of them, in every country we know of.</p></footer>"
    "</body></html>"
)

ARTICLE = (
    _HEAD.format(title="How rivers carve canyons")
    + "<div class='site-content'><main id='main' class='site-main'>"
    "<article class='post type-post'><header class='entry-header'>"
    "<h1 class='entry-title'>How rivers carve canyons</h1>"
    "<div class='entry-meta'>By Ana Lima, <time>12 March 2026</time></div></header>"
    "<div class='share-buttons'><a href='/s/fb'>DROPSHARE Facebook</a>"
    " <a href='/s/x'>DROPSHARE X</a> <a href='/s/mail'>DROPSHARE Email</a></div>"
    "<div class='entry-content'>"
    "<p>KEEPLEAD A river cuts down through rock when the water carries sand and gravel that"
    " scour its bed, a process geologists call abrasion, and it works fastest in floods.</p>"
    "<h2>KEEPH2 Three forces at work</h2>"
    "<ul><li>KEEPLIST1 abrasion by the load</li><li>KEEPLIST2 hydraulic action</li>"
    "<li>KEEPLIST3 solution of soluble rock</li></ul>"
    "<p>KEEPBODY The <a href='/grand-canyon'>KEEPLINK Grand Canyon</a> took millions of years,"
    " while the land around it rose, so the river kept cutting as the plateau lifted.</p>"
    "<table><tr><th>KEEPTH Canyon</th><th>Depth</th></tr>"
    "<tr><td>KEEPTD Grand</td><td>1,800 m</td></tr></table>"
    "<div class='newsletter-signup'><p>DROPNEWSLETTER Get our weekly digest of science"
    " stories straight to your inbox, every Friday morning, free forever.</p>"
    "<input type='email'><button>Subscribe</button></div>"
    "<p>KEEPLAST Rivers are patient sculptors, and the canyons we visit are only a moment"
    " in their long work of carrying mountains grain by grain into the sea.</p>"
    "</div></article>"
    "<section class='related-posts'><h3>DROPRELATED You may also like</h3><ul>"
    "<li><a href='/p/1'>DROPRELATED Why deserts bloom after rain</a></li>"
    "<li><a href='/p/2'>DROPRELATED The secret life of glaciers</a></li>"
    "<li><a href='/p/3'>DROPRELATED Volcanoes that made islands</a></li></ul></section>"
    "<div id='comments' class='comments-area'><h2>DROPCOMMENTS 2 comments</h2><ol>"
    "<li class='comment'><p>DROPCOMMENT Great read, I visited the canyon last summer and the"
    " layers of rock were exactly as you describe them here.</p></li>"
    "<li class='comment'><p>DROPCOMMENT Could you write about the Colorado river delta next,"
    " and what happens to all that sand once it reaches the sea?</p></li></ol></div>"
    "</main><aside class='widget-area'><h3>DROPSIDEBAR Popular</h3>"
    "<p>DROPSIDEBAR The ten best national parks to see before they change for ever.</p>"
    "</aside></div>" + _FOOT
)

PRODUCT = (
    _HEAD.format(title="Trail Runner 2 - Shoes")
    + "<nav class='breadcrumbs'><a href='/'>DROPCRUMB Home</a> / <a href='/shoes'>DROPCRUMB"
    " Shoes</a></nav>"
    "<main><div class='product' itemscope itemtype='https://schema.org/Product'>"
    "<h1 itemprop='name'>KEEPTITLE Trail Runner 2</h1>"
    "<p class='price'>KEEPPRICE $129.00</p>"
    "<form class='add-to-cart'><select><option>DROPSIZE 42</option></select>"
    "<button>DROPBUTTON Add to cart</button></form>"
    "<div class='product-description' itemprop='description'>"
    "<p>KEEPDESC A light trail shoe with a grippy outsole for wet rock and a cushioned"
    " midsole that keeps long runs comfortable from the first mile to the last.</p>"
    "<ul><li>KEEPFEATURE1 Recycled mesh upper</li><li>KEEPFEATURE2 5 mm lugs</li></ul>"
    "<table class='specs'><tr><th>KEEPSPEC Weight</th><td>KEEPSPECVALUE 280 g</td></tr>"
    "<tr><th>Drop</th><td>6 mm</td></tr></table></div>"
    "<section class='reviews'><h2>DROPREVIEWS Reviews</h2>"
    "<div class='review'><p>DROPREVIEW Comfortable out of the box and they held up well on"
    " a muddy fifty-kilometre race last spring, no blisters at all.</p></div></section>"
    "</div>"
    "<section class='recommendations'><h2>DROPRECS Customers also bought</h2>"
    "<ul class='product-grid'>"
    "<li><a href='/p/9'>DROPRECS Road Runner</a> <span>$99</span></li>"
    "<li><a href='/p/10'>DROPRECS Trail Socks</a> <span>$15</span></li>"
    "<li><a href='/p/11'>DROPRECS Running Cap</a> <span>$25</span></li></ul></section>"
    "</main>" + _FOOT
)

FORUM = (
    _HEAD.format(title="Which tent for a first winter trip? - Outdoors forum")
    + "<main><div class='topic' itemscope"
    " itemtype='https://schema.org/DiscussionForumPosting'>"
    "<h1 itemprop='headline'>KEEPTITLE Which tent for a first winter trip?</h1>"
    "<div class='post comment' id='post_1'><span class='author'>KEEPUSER1 hiker42</span>"
    "<div class='post-body'><p>KEEPQUESTION I am planning my first winter trip in the hills"
    " and wonder whether a three-season tent will do or whether I need a real winter one.</p>"
    "</div></div>"
    "<div class='post comment' id='post_2'><span class='author'>KEEPUSER2 snowfox</span>"
    "<div class='post-body'><p>KEEPREPLY1 A good three-season tent is fine below the tree"
    " line if you pitch it out of the wind and carry a warm enough sleeping bag.</p>"
    "</div></div>"
    "<div class='post comment' id='post_3'><span class='author'>KEEPUSER3 ridgeline</span>"
    "<div class='post-body'><p>KEEPREPLY2 Above the tree line I would not risk it: snow"
    " loading and wind gusts break poles, and a four-season tent is worth the weight.</p>"
    "</div></div></div>"
    "<div class='suggested-topics'><h3>DROPSUGGESTED Suggested topics</h3><ul>"
    "<li><a href='/t/1'>DROPSUGGESTED Best stove for cold weather</a></li>"
    "<li><a href='/t/2'>DROPSUGGESTED Snowshoes or microspikes?</a></li>"
    "<li><a href='/t/3'>DROPSUGGESTED Keeping water from freezing</a></li></ul></div>"
    "</main>" + _FOOT
)

LISTING = (
    _HEAD.format(title="Courses - Learn outdoors")
    + "<div class='page'><aside class='filters'><h3>DROPFILTER Filter by level</h3>"
    "<label><input type='checkbox'>DROPFILTER Beginner</label></aside>"
    "<main><h1>Outdoor courses</h1><ul class='results'>"
    "<li class='card'><h2><a href='/course/1'>KEEPITEM1 Map and compass</a></h2>"
    "<p>KEEPDESC1 Navigate without a phone.</p></li>"
    "<li class='card'><h2><a href='/course/2'>KEEPITEM2 Winter camping</a></h2>"
    "<p>KEEPDESC2 Sleep warm in the snow.</p></li>"
    "<li class='card'><h2><a href='/course/3'>KEEPITEM3 First aid outdoors</a></h2>"
    "<p>KEEPDESC3 Help until help arrives.</p></li>"
    "<li class='card'><h2><a href='/course/4'>KEEPITEM4 Knots</a></h2>"
    "<p>KEEPDESC4 Ten knots worth knowing.</p></li></ul>"
    "<nav class='pagination'><a href='?page=2'>DROPPAGER Next page</a></nav></main></div>" + _FOOT
)

DOCS = (
    _HEAD.format(title="Retries - Client docs")
    + "<div class='docs-layout'><nav class='sidebar docs-nav' aria-label='Docs'><ul>"
    "<li><a href='/docs/install'>DROPDOCSNAV Install</a></li>"
    "<li><a href='/docs/auth'>DROPDOCSNAV Authentication</a></li>"
    "<li><a href='/docs/retries'>DROPDOCSNAV Retries</a></li></ul></nav>"
    "<main class='docs-content'><article>"
    "<h1>KEEPTITLE Retries</h1>"
    "<p>KEEPINTRO The client retries a request that failed for a reason that may pass, such"
    " as a timeout or a 503, waiting longer after each attempt.</p>"
    "<h2>KEEPH2 Configuring</h2>"
    "<pre><code class='language-python'>client = Client(retries=KEEPCODE5)\n"
    "client.get('/items')</code></pre>"
    "<table><thead><tr><th>KEEPTH Setting</th><th>Default</th></tr></thead>"
    "<tbody><tr><td>KEEPTD retries</td><td>3</td></tr></tbody></table>"
    "</article>"
    "<div class='page-nav'><a href='/docs/auth' class='prev'>DROPPREVNEXT Previous</a>"
    " <a href='/docs/errors' class='next'>DROPPREVNEXT Next</a></div>"
    "</main></div>" + _FOOT
)

PAGES = {
    "article": ARTICLE,
    "product": PRODUCT,
    "forum": FORUM,
    "listing": LISTING,
    "docs": DOCS,
}


def words(page: str, prefix: str) -> set[str]:
    """The marker words of ``page`` starting ``prefix`` (``KEEP`` or ``DROP``)."""
    return set(re.findall(rf"\b{prefix}[A-Z0-9]+\b", page))
