"""``tls``: whether a site whose TLS certificate fails verification is fetched anyway (its
results marked ``tls_unverified``, never kept for reuse); a deployment may refuse it
(``SCRAPEJOBS_ALLOW_UNVERIFIED_TLS=false``: ``ServedHere.unverified_tls``).

| Firecrawl | native |
|---|---|
| ``skipTlsVerification`` (true unset, where the deployment allows it) | ``options.verify_tls`` (its negation) |

On an upload (nothing is fetched) it is accepted and does nothing."""  # noqa: E501

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from .option_family import (
    InvalidOption,
    NotServed,
    OptionFamily,
    ServedHere,
)

ALWAYS_VERIFIED = (
    "this deployment always verifies TLS certificates (SCRAPEJOBS_ALLOW_UNVERIFIED_TLS=false)"
)
UNVERIFIED_REFUSED = f"{ALWAYS_VERIFIED}; leave skipTlsVerification out or set it to false"


class Tls(OptionFamily):
    name = "tls"
    native_fields = {
        "options": {
            "verify_tls": (
                bool,
                Field(
                    default=True,
                    description="false: a site whose TLS certificate fails verification "
                    "(self-signed, expired, another host's) is fetched anyway, its results "
                    "marked tls_unverified (never kept for reuse); every other guard still "
                    "applies. A deployment may refuse false (SCRAPEJOBS_ALLOW_UNVERIFIED_TLS)",
                ),
            )
        }
    }
    firecrawl_fields = {
        "scrape_options": {
            "skip_tls_verification": (
                bool | None,
                Field(
                    default=None,
                    description="true (Firecrawl's default, and what firecrawl-py 3.0-4.54 "
                    "sends): a certificate that fails verification does not fail the page (its "
                    "metadata says tlsVerified: false); false: it does. Where the deployment "
                    "always verifies (SCRAPEJOBS_ALLOW_UNVERIFIED_TLS=false), unset means false "
                    "and true is a 400",
                ),
            )
        }
    }
    firecrawl_names = {"options.verify_tls": "skipTlsVerification"}
    uploads = "ignored"

    def of(self, options: Any) -> bool:
        """Whether a job's certificates are verified."""
        verified: bool = options.verify_tls
        return verified

    def options_to_native(self, given: BaseModel, native: dict[str, Any], here: ServedHere) -> None:
        skip: bool | None = getattr(given, "skip_tls_verification", None)
        if skip and not here.unverified_tls:
            raise InvalidOption("skipTlsVerification", UNVERIFIED_REFUSED)
        native["verify_tls"] = not (here.unverified_tls if skip is None else skip)

    def served(self, request: Any, here: ServedHere) -> NotServed | None:
        if not self.of(request.options) and not here.unverified_tls:
            return NotServed("options.verify_tls", ALWAYS_VERIFIED)
        return None


TLS = Tls()
