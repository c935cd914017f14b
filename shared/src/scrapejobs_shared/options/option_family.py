"""One family of job options, in one module: its native fields, its Firecrawl fields and how they
become native ones, whether this deployment serves what a job asks of it, and what it changes in
a page's fetch. The registry (``options/__init__.py``) lists the families once; the request
models, the Firecrawl translation, the submission rules and the worker read them through it.

A family's fields join a model by the model's *kind*:

* native: ``options`` (``JobOptions``, every job's options) and ``scrape`` (``ScrapeRequest``'s
  own fields: ``POST /v1/scrape``);
* Firecrawl: ``scrape_options`` (the scrape options of ``/v2/scrape``, ``/v2/batch/scrape`` and a
  crawl's ``scrapeOptions``), ``scrape``, ``batch``, ``crawl`` and ``map`` (each body's own).

A field a family reads is read through the family (``LOCATION.of(options)``): the models are
made with the families' fields when the registry is imported, so a type checker sees only the
fields the models declare themselves."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import BaseModel

from scrapejobs_shared.errors import InvalidInput

from .proxy_pools import NO_PROXIES, ProxyPool

NativeKind = Literal["options", "scrape"]
FirecrawlKind = Literal["scrape_options", "scrape", "batch", "crawl", "map"]
FieldSpec = tuple[Any, Any]  # a field's type and its pydantic Field(...)
# what a family's Firecrawl fields do on an uploaded file (nothing is fetched): they are read,
# accepted and ignored (a fetch's), or refused (they would change what is fetched)
OnUploads = Literal["read", "ignored", "refused"]


@dataclass(frozen=True, slots=True)
class ServedHere:
    """What this deployment serves of what some families offer (the dispatcher's settings)."""

    zero_data_retention: bool = True  # SCRAPEJOBS_ZERO_DATA_RETENTION
    # a certificate that fails verification may be let pass (SCRAPEJOBS_ALLOW_UNVERIFIED_TLS):
    # Firecrawl's skipTlsVerification unset is its true; false refuses true and verifies unset
    unverified_tls: bool = True
    # a Firecrawl request without waitFor or mobile: plain fetches, or render the pages that
    # show nothing (SCRAPEJOBS_FIRECRAWL_RENDER), as Firecrawl renders every page
    firecrawl_render: Literal["plain", "auto"] = "plain"
    keeps_files: bool = True  # a file store (SCRAPEJOBS_FILES_BUCKET) keeps pages' files
    proxies: ProxyPool = NO_PROXIES  # the pools pages go through (SCRAPEJOBS_PROXIES)


NO_FILE_STORE = "kept in a file store, and none is configured here (SCRAPEJOBS_FILES_BUCKET)"


@dataclass(frozen=True, slots=True)
class NotServed:
    """A family's answer when this deployment does not serve what a request asks: the native
    field at fault and why (the API answers a 422 naming both)."""

    field: str
    reason: str


class InvalidOption(InvalidInput):
    """A Firecrawl request the native job model refuses: ``field`` names the Firecrawl field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}", field)


class OptionFamily:
    """The base of a family: every hook does nothing until the family says otherwise."""

    name: ClassVar[str]
    native_fields: ClassVar[Mapping[NativeKind, Mapping[str, FieldSpec]]] = {}
    firecrawl_fields: ClassVar[Mapping[FirecrawlKind, Mapping[str, FieldSpec]]] = {}
    # native field paths → the Firecrawl field they came from (an error names the latter)
    firecrawl_names: ClassVar[Mapping[str, str]] = {}
    uploads: ClassVar[OnUploads] = "read"
    on_uploads: ClassVar[str] = "an upload is not fetched"  # why an upload refuses them

    def settle(self, options: Any) -> None:
        """Settle a job's validated native ``options`` where this family's fields depend on
        others (a screenshot format renders the job)."""

    def options_to_native(self, given: BaseModel, native: dict[str, Any], here: ServedHere) -> None:
        """Write into ``native`` (a job's native ``options``) what Firecrawl's scrape options
        ``given`` ask of this family, as this deployment serves it (``InvalidOption`` when it
        does not)."""

    def body_to_native(self, kind: FirecrawlKind, given: BaseModel, native: dict[str, Any]) -> None:
        """Write into ``native`` (the whole native request) what the Firecrawl body ``given``
        of ``kind`` asks of this family beside its scrape options."""

    def served(self, request: Any, here: ServedHere) -> NotServed | None:
        """Why this deployment does not serve what ``request`` (a native job request) asks of
        this family (None: it does)."""
        return None

    def request_headers(self, options: Any) -> Mapping[str, str]:
        """Request headers a page's fetch sends for a job's ``options`` (the job's own
        ``headers`` win)."""
        return {}

    def browser_context(self, options: Any) -> Mapping[str, str]:
        """The browser context's settings a rendered page of a job's ``options`` needs (its
        ``locale``)."""
        return {}

    def keeps_result(self, request: Any) -> bool:
        """False when a synchronous scrape's result must not be kept once it is answered."""
        return True
