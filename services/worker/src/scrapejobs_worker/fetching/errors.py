"""Translation of httpx transport exceptions into the port's FetchError hierarchy."""

from __future__ import annotations

import ssl

import httpx

from scrapejobs_shared.ports.fetcher import FetchError, PermanentFetchError, TransientFetchError


def translate_transport_error(exc: httpx.TransportError) -> FetchError:
    """Timeouts and network failures are transient; our own mistakes and bad certs are not."""
    detail = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, httpx.TimeoutException):
        return TransientFetchError(detail, reason="timeout")
    if isinstance(exc, httpx.UnsupportedProtocol):
        return PermanentFetchError(detail, reason="invalid_url")
    if isinstance(exc, httpx.LocalProtocolError):
        return PermanentFetchError(detail, reason="invalid_request")
    if certificate_refused(exc):
        return PermanentFetchError(
            f"{detail} (the certificate failed verification: options.verify_tls false, or "
            "Firecrawl's skipTlsVerification true, fetches it anyway)",
            reason="tls_error",
        )
    return TransientFetchError(detail, reason="connection_error")


def certificate_refused(exc: BaseException) -> bool:
    """Whether ``exc`` is a TLS certificate (or host name) that failed verification."""
    return _caused_by(exc, ssl.SSLCertVerificationError)


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
