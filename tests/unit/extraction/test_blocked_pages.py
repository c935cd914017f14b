"""Bot challenges and login walls (extraction/blocked_pages.py) and pages that show nothing
(visible_text.shows_nothing), row by row; and what must never be flagged: the catalog's own
pages and ordinary real-world shapes (a page served through Cloudflare or Akamai, DataDome's
header on a page it let through, a form with a captcha widget, an article about challenges, a
login page asked for, redirects elsewhere)."""

from __future__ import annotations

import pytest
from parsel import Selector

from scrapejobs_devstack.demo_site.catalog import (
    index_page,
    product_json,
    product_page,
    scripted_product_page,
)
from scrapejobs_shared.extraction.blocked_pages import blocked_page
from scrapejobs_shared.extraction.unusable_pages import Unusable
from scrapejobs_shared.extraction.visible_text import shows_nothing
from support.hostile_page import hostile_page
from support.site import messy_page

HTML = {"content-type": "text/html; charset=utf-8"}
URL = "https://shop.example/product/7"

CLOUDFLARE_CHALLENGE = (
    "<!DOCTYPE html><html lang='en-US'><head><title>Just a moment...</title>"
    "<meta http-equiv='refresh' content='390'></head><body><div class='main-wrapper'>"
    "<noscript>Enable JavaScript and cookies to continue</noscript></div>"
    "<script>(function(){window._cf_chl_opt={cvId: '3'};var a=document.createElement('script');"
    "a.src='/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1?ray=8';"
    "document.getElementsByTagName('head')[0].appendChild(a);}());</script></body></html>"
)
DATADOME_BLOCK = (
    "<html><head><title>shop.example</title></head><body style='margin:0'>"
    "<p id='cmsg'>Please enable JS and disable any ad blocker</p><script>var dd={'rt':'c',"
    "'host':'geo.captcha-delivery.com'}</script>"
    "<script src='https://ct.captcha-delivery.com/c.js'></script></body></html>"
)
PERIMETERX_BLOCK = (
    "<html><head><title>Access to this page has been denied</title></head><body>"
    "<div id='px-captcha'></div><p>Press &amp; Hold to confirm you are a human.</p>"
    "<script>window._pxAppId='PXabc';</script></body></html>"
)
AKAMAI_DENIED = (
    "<HTML><HEAD><TITLE>Access Denied</TITLE></HEAD><BODY><H1>Access Denied</H1>You don't have "
    "permission to access this page.<P>Reference&#32;&#35;18&#46;abc<P>"
    "https&#58;&#47;&#47;errors&#46;edgesuite&#46;net&#47;18 </BODY></HTML>"
)
CAPTCHA_INTERSTITIAL = (
    "<html><head><title>Verify you are human</title></head><body><form method='post'>"
    "<div class='h-captcha' data-sitekey='x'></div><button>Continue</button></form>"
    "<script src='https://js.hcaptcha.com/1/api.js'></script></body></html>"
)

CONTACT_FORM = (
    "<html><head><title>Contact us | Shop</title>"
    "<script src='https://www.google.com/recaptcha/api.js'></script></head><body><main>"
    "<h1>Contact us</h1><p>Write to us and we answer within a day.</p><form>"
    "<textarea name='m'></textarea><div class='g-recaptcha' data-sitekey='x'></div>"
    "<button>Send</button></form></main></body></html>"
)
ARTICLE_ABOUT_CHALLENGES = (
    "<html><head><title>Why sites say 'Just a moment...' and ask if you are a robot</title>"
    "</head><body><article><h1>Bot challenges explained</h1><p>Cloudflare shows a page "
    "titled Just a moment... while it checks your browser; DataDome serves its captcha from "
    "captcha-delivery.com. Security check pages and captcha challenges are common.</p>"
    "</article></body></html>"
)


@pytest.mark.parametrize(
    ("status", "headers", "body", "vendor"),
    [
        (
            403,
            {**HTML, "cf-mitigated": "challenge", "server": "cloudflare"},
            "<html></html>",
            "Cloudflare",
        ),
        (200, HTML, CLOUDFLARE_CHALLENGE, "Cloudflare"),
        (503, {**HTML, "server": "cloudflare"}, CLOUDFLARE_CHALLENGE, "Cloudflare"),
        (403, {**HTML, "x-datadome": "protected", "x-dd-b": "1"}, DATADOME_BLOCK, "DataDome"),
        (200, HTML, DATADOME_BLOCK, "DataDome"),
        (403, HTML, PERIMETERX_BLOCK, "PerimeterX"),
        (403, {**HTML, "server": "AkamaiGHost"}, AKAMAI_DENIED, "Akamai"),
        (200, HTML, AKAMAI_DENIED, "Akamai"),
        (200, HTML, CAPTCHA_INTERSTITIAL, "a captcha"),
        (429, HTML, "<html><head><title>Pardon Our Interruption</title></head></html>", "Imperva"),
    ],
)
def test_challenges_are_seen(status: int, headers: dict[str, str], body: str, vendor: str) -> None:
    found = blocked_page(status, headers, body.encode(), URL)
    assert found is not None and found.kind is Unusable.CHALLENGE, found
    assert found.detail.startswith(vendor) and found.error.startswith("challenge: ")


@pytest.mark.parametrize(
    ("requested", "final", "wall"),
    [
        ("https://a.example/account", "https://a.example/login?next=/account", True),
        ("https://a.example/orders/7", "https://a.example/users/sign_in", True),
        ("https://a.example/report", "https://sso.a.example/auth/realms/x/protocol/openid", True),
        ("https://a.example/doc", "https://accounts.a.example/signin/v2/identifier", True),
        ("https://a.example/p", "https://a.example/wp-login.php", False),  # not one of ours
        ("https://a.example/login", "https://a.example/login/", False),  # asked for
        ("https://a.example/old", "https://a.example/new", False),
        ("https://a.example/login", "https://a.example/dashboard", False),
        ("https://a.example/x", "https://a.example/author/jane", False),
        ("https://a.example/x", "https://a.example/blog/login-tips", False),
    ],
)
def test_a_redirect_to_a_sign_in_page_not_asked_for_is_a_login_wall(
    requested: str, final: str, wall: bool
) -> None:
    found = blocked_page(
        200, HTML, b"<html><body><form>Sign in</form></body></html>", final, [requested]
    )
    assert (found is not None and found.kind is Unusable.LOGIN_WALL) is wall, found
    assert blocked_page(200, HTML, b"<html></html>", final, []) is None  # no redirect: asked


@pytest.mark.parametrize(
    ("status", "headers", "body"),
    [
        *((200, HTML, product_page(n)) for n in (0, 7, 42)),
        (200, HTML, index_page(30)),
        (200, HTML, messy_page(3)),
        (200, HTML, scripted_product_page(5)),
        (200, {"content-type": "application/json"}, product_json(3)),
        (200, HTML, hostile_page("http://127.0.0.1:1/").decode()),
        (
            200,
            {**HTML, "server": "cloudflare", "cf-ray": "8abc-CDG", "cf-cache-status": "HIT"},
            product_page(9),
        ),
        (
            404,
            {**HTML, "server": "cloudflare", "cf-ray": "8abc-CDG"},
            "<html><title>Not found</title></html>",
        ),
        (200, {**HTML, "x-datadome": "protected", "x-dd-b": "1"}, product_page(4)),  # let through
        (200, {**HTML, "server": "AkamaiGHost"}, product_page(5)),
        (200, HTML, CONTACT_FORM),
        (200, HTML, ARTICLE_ABOUT_CHALLENGES),
        (500, HTML, "<html><title>Internal Server Error</title></html>"),
    ],
)
def test_ordinary_pages_are_never_flagged(status: int, headers: dict[str, str], body: str) -> None:
    assert blocked_page(status, headers, body.encode(), URL) is None


@pytest.mark.parametrize(
    ("body", "nothing"),
    [
        ("<html><body><div id='root'></div><script src='/app.js'></script></body></html>", True),
        (
            "<html><body><div id='root'></div><noscript>You need to enable JavaScript to run "
            "this app.</noscript><script>boot()</script></body></html>",
            True,
        ),
        (scripted_product_page(3), True),  # "loading…" beside the script that builds it
        ("<html><head><title>T</title></head><body>   </body></html>", True),
        ("<html><head><title>T</title></head></html>", True),
        ("<html><body><p>OK</p></body></html>", False),  # short, but no script to build more
        ("<html><body><img src='/a.png'><script>x()</script></body></html>", False),
        (
            "<html><body><p>Sold out: back in stock in the spring, says the shop.</p>"
            "<script>track()</script></body></html>",
            False,
        ),
        (product_page(3), False),
        (messy_page(2), False),
        (index_page(3), False),
        (CONTACT_FORM, False),
    ],
)
def test_a_page_that_shows_nothing(body: str, nothing: bool) -> None:
    assert shows_nothing(Selector(text=body).root) is nothing
