"""What a rule answers when it refuses a request: this deployment cannot serve it, or it is
past one of the deployment's limits."""

from __future__ import annotations

from scrapejobs_shared.errors import InvalidInput


class UnavailableHere(InvalidInput):
    """A request this deployment cannot or will not serve (an ``ai`` stage with no AI provider
    configured, a certificate check turned off where the deployment refuses it): a 422 naming
    the field and the setting."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}", field)


class OverLimit(UnavailableHere):
    """A request past one of this deployment's limits (a tenant's monitors, a check's pages):
    a 422 naming the field and the setting."""
