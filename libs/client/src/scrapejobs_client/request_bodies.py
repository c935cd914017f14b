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
    actions: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any] | None:
    """Job options with ``render``, ``formats`` and the browser's ``actions`` set (``None``
    leaves them as given). Actions render the pages (``options.render.actions``): with
    ``render="auto"`` the pages rendered, ``render=False`` with actions is an error."""
    if actions is not None:
        render = _with_actions(render, actions)
    if render is None and formats is None:
        return dict(options) if options is not None else None
    merged = dict(options or {})
    if render is not None:
        merged["render"] = render if isinstance(render, bool | str) else dict(render)
    if formats is not None:
        merged["formats"] = [f if isinstance(f, str) else dict(f) for f in formats]
    return merged


def _with_actions(
    render: bool | Literal["auto"] | Mapping[str, Any] | None,
    actions: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    if render is False:
        raise ValueError("browser actions render the page: not with render=False")
    rendered = dict(render) if isinstance(render, Mapping) else {}
    if render == "auto":
        rendered["when"] = "auto"
    rendered["actions"] = [dict(action) for action in actions]
    return rendered


def webhook_body(webhook: Webhook | str | None) -> dict[str, Any] | None:
    if webhook is None:
        return None
    if isinstance(webhook, str):
        webhook = Webhook(url=webhook)
    return webhook.model_dump(exclude_none=True)
