"""Translation of aiohttp's client exceptions into the port's FetchError hierarchy."""

from __future__ import annotations

import ssl

import aiohttp

from scrapejobs_shared.ports.fetcher import FetchError, PermanentFetchError, TransientFetchError


def translate_transport_error(exc: aiohttp.ClientError) -> FetchError:
    """Timeouts and network failures (a connection refused or cut, a response that breaks
    HTTP) are transient; our own mistakes and bad certificates are not."""
    detail = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, aiohttp.ServerTimeoutError):
        return TransientFetchError(detail, reason="timeout")
    if isinstance(exc, aiohttp.InvalidURL):
        return PermanentFetchError(detail, reason="invalid_url")
    if certificate_refused(exc):
        return PermanentFetchError(
            f"{detail} (the certificate failed verification: options.verify_tls false, or "
            "Firecrawl's skipTlsVerification true, fetches it anyway)",
            reason="tls_error",
        )
    return TransientFetchError(detail, reason="connection_error")


def certificate_refused(exc: BaseException) -> bool:
    """Whether ``exc`` is a TLS certificate (or host name) that failed verification."""
    return isinstance(exc, aiohttp.ClientConnectorCertificateError) or _caused_by(
        exc, ssl.SSLCertVerificationError
    )


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def deadline_exceeded(timeout_s: float) -> TransientFetchError:
    return TransientFetchError(f"fetch exceeded its {timeout_s:g}s deadline", reason="timeout")
