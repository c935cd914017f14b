"""Request bodies the client builds: job options with the rendering and formats a caller
asked for, a webhook given as a URL or a ``Webhook``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from scrapejobs_client.models import Webhook


def with_options(
    options: Mapping[str, Any] | None,
    render: bool | Literal["auto"] | Mapping[str, Any] | None = None,
    formats: Sequence[str | Mapping[str, Any]] | None = None,
) -> dict[str, Any] | None:
    """Job options with ``render`` and ``formats`` set (``None`` leaves them as given)."""
    if render is None and formats is None:
        return dict(options) if options is not None else None
    merged = dict(options or {})
    if render is not None:
        merged["render"] = render if isinstance(render, bool | str) else dict(render)
    if formats is not None:
        merged["formats"] = [f if isinstance(f, str) else dict(f) for f in formats]
    return merged


def webhook_body(webhook: Webhook | str | None) -> dict[str, Any] | None:
    if webhook is None:
        return None
    if isinstance(webhook, str):
        webhook = Webhook(url=webhook)
    return webhook.model_dump(exclude_none=True)
