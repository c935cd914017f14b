"""Responses that stand between the job and the page it asked for: a bot challenge (Cloudflare,
Akamai, DataDome, PerimeterX, Imperva, captcha interstitials) or a login wall (redirected to a
sign-in page the job did not ask for). Table-driven: each row says what it looks for and is
listed in docs/semantics.md ("Pages that are not what was asked for"); a row must not match an
ordinary page, which tests/unit/extraction/test_blocked_pages.py checks on the catalog's pages
and on real-world shapes (a page served through Cloudflare, a form with a captcha widget, an
article about captchas, a login page asked for).

Only the head of the body is read: the title in the first ``TITLE_BYTES``, vendor markers (as
vendors write them, not case-folded) in the first ``SCANNED_BYTES`` of a page that answered
with an error status or is small (``SMALL_PAGE_BYTES``). Vendors answer challenges with error
statuses; one that answers 2xx says what it is in its title. An ordinary page costs about 0.05 M
instructions, whatever its size (bench/README.md, "Honest outcomes: what the checks cost").
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from scrapejobs_shared.extraction.unusable_pages import Unusable

SCANNED_BYTES = 32_768
SMALL_PAGE_BYTES = 4_096
TITLE_BYTES = 8_192
_TITLE = re.compile(rb"<title[^>]*>(.{0,300}?)</title", re.IGNORECASE | re.DOTALL)
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Blocked:
    kind: Unusable
    detail: str  # who, and by which sign

    @property
    def error(self) -> str:
        """The task's error: its kind as the code, then what was seen."""
        return f"{self.kind.value}: {self.detail}"


@dataclass(frozen=True, slots=True)
class HeaderSign:
    vendor: str
    header: str  # lower-cased name
    value: str | None  # a value it contains (lower-cased); None: present at all
    statuses: frozenset[int] | None = None  # only with these statuses (None: any)


@dataclass(frozen=True, slots=True)
class BodySign:
    vendor: str
    marker: bytes  # as vendors write it (matched as is), in the head of the body


@dataclass(frozen=True, slots=True)
class TitleSign:
    vendor: str
    pattern: re.Pattern[str]  # over the lower-cased, whitespace-normalised title


BLOCK_STATUSES = frozenset({401, 403, 405, 429, 503})
HEADER_SIGNS: tuple[HeaderSign, ...] = (
    HeaderSign("Cloudflare", "cf-mitigated", "challenge"),
    HeaderSign("DataDome", "x-datadome", None, BLOCK_STATUSES),
    HeaderSign("DataDome", "x-dd-b", None, BLOCK_STATUSES),
    HeaderSign("Akamai", "server", "akamaighost", frozenset({403})),
    HeaderSign("PerimeterX", "x-px-block", None),
)
BODY_SIGNS: tuple[BodySign, ...] = (
    BodySign("Cloudflare", b"/cdn-cgi/challenge-platform/"),
    BodySign("Cloudflare", b"cf-browser-verification"),
    BodySign("Cloudflare", b"window._cf_chl_opt"),
    BodySign("DataDome", b"geo.captcha-delivery.com"),
    BodySign("DataDome", b"ct.captcha-delivery.com"),
    BodySign("PerimeterX", b"px-captcha"),
    BodySign("PerimeterX", b"/px/captcha/"),
    BodySign("Akamai", b"errors.edgesuite.net"),
    BodySign("Akamai", b"errors&#46;edgesuite&#46;net"),  # as its denial page writes it
    BodySign("Imperva", b"_incapsula_resource"),
    BodySign("AWS WAF", b"awswaf.com/"),
)
TITLE_SIGNS: tuple[TitleSign, ...] = (
    TitleSign("Cloudflare", re.compile(r"^just a moment\.*$")),
    TitleSign("Cloudflare", re.compile(r"^attention required! \| cloudflare$")),
    TitleSign("PerimeterX", re.compile(r"^access to this page has been denied\.?$")),
    TitleSign("Imperva", re.compile(r"^pardon our interruption\.*$")),
    TitleSign(
        "a captcha",
        re.compile(
            r"^(verify you are (a )?human|human verification|are you a robot\??|"
            r"captcha( challenge)?|bot (check|verification)|security check|"
            r"please verify you are a human|one more step)$"
        ),
    ),
)
# A segment (or two) of a path that signs someone in: /login, /users/sign_in, /auth/..., ...
_LOGIN_PATH = re.compile(
    r"(^|/)(log-?in|sign-?in|sign_in|signon|sso|auth|authenticate|authorize|"
    r"sessions?/new|users/sign_in|accounts?/login|oauth2?/authorize|"
    r"(log-?in|sign-?in)\.(php|aspx?|html?|jsp))(/|$)",
    re.IGNORECASE,
)


def blocked_page(
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    url: str,
    redirects: Sequence[str] = (),
) -> Blocked | None:
    """What stands between the job and its page, if anything (``headers`` lower-cased;
    ``url`` the final URL, ``redirects`` the URLs that redirected, the requested one first)."""
    return _challenge(status, headers, body) or _login_wall(url, redirects)


def _challenge(status: int, headers: Mapping[str, str], body: bytes) -> Blocked | None:
    for sign in HEADER_SIGNS:
        value = headers.get(sign.header)
        if value is None or (sign.statuses is not None and status not in sign.statuses):
            continue
        if sign.value is None or sign.value in value.lower():
            shown = f"{sign.header}: {value}"[:80]
            return Blocked(Unusable.CHALLENGE, f"{sign.vendor} ({shown}, HTTP {status})")
    if not 200 <= status < 300 or len(body) <= SMALL_PAGE_BYTES:
        head = body[:SCANNED_BYTES]
        for marker in BODY_SIGNS:
            if marker.marker in head:
                seen = marker.marker.decode()
                return Blocked(Unusable.CHALLENGE, f"{marker.vendor} ({seen!r} in the page)")
    title = _title(body[:TITLE_BYTES])
    for title_sign in TITLE_SIGNS if title else ():
        if title_sign.pattern.match(title):
            return Blocked(Unusable.CHALLENGE, f"{title_sign.vendor} (title {title!r})")
    return None


def _title(head: bytes) -> str:
    found = _TITLE.search(head)
    if found is None:
        return ""
    text = html.unescape(found.group(1).decode("utf-8", "replace"))
    return _SPACES.sub(" ", text).strip().lower()


def _login_wall(url: str, redirects: Sequence[str]) -> Blocked | None:
    """Redirected to a sign-in page the request did not ask for."""
    if not redirects or not _signs_in(url) or _signs_in(redirects[0]):
        return None
    return Blocked(Unusable.LOGIN_WALL, f"redirected to a sign-in page: {url[:200]}")


def _signs_in(url: str) -> bool:
    return _LOGIN_PATH.search(urlsplit(url).path.rstrip("/") + "/") is not None
