"""Who may open the dashboard: the API's policy, or in ``api_key`` mode a signed-in session
(sessions.py); and that actions come from the dashboard's own pages. A refusal is raised as
an exception the dashboard turns into a page, a redirect to the sign-in form, or (for htmx's
polls) a redirect htmx follows."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Query, Request

from scrapejobs_dispatcher.tenants.authentication import Authenticator, require_caller
from scrapejobs_dispatcher.ui.sessions import COOKIE, DashboardSessions, same_origin
from scrapejobs_shared.domain.tenancy import TENANT_PATTERN, Caller
from scrapejobs_shared.errors import NotAllowed


class SignInRequired(NotAllowed):
    """``api_key`` mode, no valid session (and no valid X-API-Key)."""


class CrossSiteRequest(NotAllowed):
    """An action another origin's page made the browser send."""


async def require_viewer(request: Request) -> Caller:
    """Router dependency of every dashboard page, fragment and action but the sign-in form:
    who is looking (a member sees its tenant's work, an admin every tenant's)."""
    authenticator: Authenticator = request.app.state.authenticator
    request.state.signed_in = False
    if authenticator.mode == "api_key":
        sessions: DashboardSessions = request.app.state.dashboard_sessions
        caller = await sessions.valid(request.cookies.get(COOKIE))
        if caller is not None:
            request.state.signed_in = True
            request.state.viewer = caller
            return caller
        try:
            caller = await require_caller(request)  # a proxy that adds X-API-Key still works
        except HTTPException:
            raise SignInRequired from None
    else:
        caller = await require_caller(request)
    request.state.viewer = caller
    return caller


async def require_same_origin(request: Request) -> None:
    """Dependency of every POST under /ui (actions, sign-in, sign-out)."""
    if not same_origin(request.url.scheme, request.headers):
        raise CrossSiteRequest


# what a dashboard action needs: a request from the dashboard's own pages
SAME_ORIGIN = [Depends(require_same_origin)]
# a tenant's name, or "" (every tenant: what the dashboard's own links carry without a filter)
TenantFilter = Annotated[str | None, Query(pattern=f"^$|{TENANT_PATTERN}")]
