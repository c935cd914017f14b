"""What an origin's robots.txt (RFC 9309) lets us fetch, parsed with Protego.

Outcome of fetching ``/robots.txt`` (:func:`rules_for_response`, RFC 9309 section 2.3.1):

* 2xx: the body is parsed (:meth:`RobotsRules.parse`).
* 3xx left after the fetcher followed up to five redirects, and 4xx ("unavailable"):
  everything is allowed.
* 429, 5xx, any other status, and network errors (``status=None``) ("unreachable"): nothing
  is allowed. The caller retries later; the cache entry should be short-lived.

Parsing decodes UTF-8 with replacement characters (a leading BOM is dropped) and reads at
most the first 500 KiB (:data:`MAX_ROBOTS_BYTES`, the minimum RFC 9309 requires parsers to
handle); the rest is ignored, as is a line cut in two by that limit.

Group selection: our full User-Agent header (``scrapejobs/0.1 (+https://...)``) is reduced
to its product token (``scrapejobs``: the leading run of ``[A-Za-z_-]``). A group whose
``User-agent`` equals that token, case-insensitively, applies (several such groups are
merged); otherwise the ``*`` group does; with neither, everything is allowed. Protego on its
own would also apply a group for a *prefix* of the token (``User-agent: scrape``), which
RFC 9309 does not, so the groups the file declares are looked up first.

Rule matching is Protego's: the longest matching path pattern wins, an ``Allow`` wins over a
``Disallow`` of equal length, ``*`` and a trailing ``$`` are wildcards, percent-encoding is
normalised on both sides (``/a%3cb`` and ``/a<b`` are the same path), and ``/robots.txt``
itself is always allowed.

``Crawl-delay`` is honoured up to :data:`MAX_CRAWL_DELAY_S`: it paces the host for every job
and tenant, so a file asking for hours cannot freeze a site for everyone.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from protego import Protego

ROBOTS_CACHE_TTL_S = 24 * 3600
MAX_ROBOTS_BYTES = 500 * 1024
MAX_CRAWL_DELAY_S = 60.0  # a longer Crawl-delay is taken as this
ROBOTS_PATH = "/robots.txt"

_ANY_AGENT = "*"
_PRODUCT_TOKEN = re.compile(r"[A-Za-z_-]+")
# A Disallow rule with a path, under any of the misspellings Protego accepts ("dissallow",
# "disalow", "diasllow", ...): every directive whose name starts with "di" counts, to be safe.
_DISALLOW_LINE = re.compile(r"\s*di[a-z]*\s*:\s*\S", re.IGNORECASE)
_USER_AGENT_LINE = re.compile(r"user[- ]?agent\s*(?::\s*|\s+)(\S.*)", re.IGNORECASE)


@dataclass(frozen=True)
class RobotsRules:
    """The parsed rules of one origin, or a blanket allow/disallow."""

    default_allowed: bool = True
    parser: Protego | None = field(default=None, repr=False, compare=False)
    agents: frozenset[str] = frozenset()
    # False when the file has no Disallow rule with a path (``Allow: /`` alone, or only
    # comments, sitemaps and delays): every path is allowed, without asking Protego per URL
    restricts: bool = True
    _delays: dict[str, float | None] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def allow_all(cls) -> RobotsRules:
        """No restrictions (robots.txt unavailable: 4xx, or too many redirects)."""
        return cls(default_allowed=True)

    @classmethod
    def disallow_all(cls) -> RobotsRules:
        """Complete disallow (robots.txt unreachable: 5xx, 429 or a network failure)."""
        return cls(default_allowed=False)

    @classmethod
    def parse(cls, body: bytes) -> RobotsRules:
        """The rules of a robots.txt body (its first :data:`MAX_ROBOTS_BYTES` only)."""
        text = _decode(body)
        lines = text.splitlines()
        return cls(
            parser=Protego.parse(text),
            agents=_declared_agents(lines),
            restricts=any(_DISALLOW_LINE.match(line.partition("#")[0]) for line in lines),
        )

    def allows(self, url: str, user_agent: str) -> bool:
        """Whether ``user_agent`` may fetch ``url`` (an absolute URL of this origin)."""
        if self.parser is None:
            return self.default_allowed or _is_robots_txt(url)
        if not self.restricts or _is_robots_txt(url):
            return True
        return bool(self.parser.can_fetch(url, self._group_agent(user_agent)))

    @property
    def sitemaps(self) -> list[str]:
        """The ``Sitemap:`` URLs the file names, as written (RFC 9309 section 2.2.4)."""
        return [] if self.parser is None else list(self.parser.sitemaps)

    def crawl_delay(self, user_agent: str) -> float | None:
        """Seconds between requests asked by the group that applies, if any (asked of Protego
        once per agent: it is asked for every page)."""
        if self.parser is None:
            return None
        agent = self._group_agent(user_agent)
        if agent not in self._delays:
            delay = self.parser.crawl_delay(agent)
            self._delays[agent] = None if delay is None else min(float(delay), MAX_CRAWL_DELAY_S)
        return self._delays[agent]

    def _group_agent(self, user_agent: str) -> str:
        """The agent name to query Protego with: our token if it has a group, else ``*``."""
        token = product_token(user_agent)
        return token if token and token in self.agents else _ANY_AGENT


def rules_for_response(status: int | None, body: bytes) -> RobotsRules:
    """The rules implied by fetching robots.txt (``status=None``: network failure)."""
    if status is None or status == 429:
        return RobotsRules.disallow_all()
    if 200 <= status < 300:
        return RobotsRules.parse(body)
    if 300 <= status < 500:
        return RobotsRules.allow_all()
    return RobotsRules.disallow_all()


@functools.lru_cache(maxsize=64)
def product_token(user_agent: str) -> str:
    """The lower-cased product token of a User-Agent header (``""`` if it has none)."""
    match = _PRODUCT_TOKEN.match(user_agent.strip())
    return match.group(0).lower() if match else ""


def _decode(body: bytes) -> str:
    """The first :data:`MAX_ROBOTS_BYTES` as text, without a trailing partial line."""
    if len(body) > MAX_ROBOTS_BYTES:
        body = body[:MAX_ROBOTS_BYTES]
        last_newline = max(body.rfind(b"\n"), body.rfind(b"\r"))
        if last_newline >= 0:
            body = body[: last_newline + 1]
    return body.decode("utf-8-sig", errors="replace")


def _declared_agents(lines: Iterable[str]) -> frozenset[str]:
    """The lower-cased names of the ``User-agent`` lines (wildcards also dropped)."""
    agents: set[str] = set()
    for line in lines:
        match = _USER_AGENT_LINE.match(line.partition("#")[0].strip())
        if match is None:
            continue
        name = match.group(1).strip().lower()
        agents.add(name)
        if name != _ANY_AGENT:
            agents.add(name.replace("*", ""))
    return frozenset(agents)


def _is_robots_txt(url: str) -> bool:
    try:
        return urlsplit(url).path == ROBOTS_PATH
    except ValueError:
        return False
