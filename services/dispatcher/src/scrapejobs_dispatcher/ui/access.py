"""Who may open the dashboard: the API's policy, or in ``api_key`` mode a signed-in session
(sessions.py); and that actions come from the dashboard's own pages. A refusal is raised as
an exception the dashboard turns into a page, a redirect to the sign-in form, or (for htmx's
polls) a redirect htmx follows."""

from __future__ import annotations

from fastapi import HTTPException, Request

from scrapejobs_dispatcher.authentication import Authenticator
from scrapejobs_dispatcher.ui.sessions import COOKIE, DashboardSessions, same_origin


class SignInRequired(Exception):
    """``api_key`` mode, no valid session (and no valid X-API-Key)."""


class CrossSiteRequest(Exception):
    """An action another origin's page made the browser send."""


async def require_viewer(request: Request) -> None:
    """Router dependency of every dashboard page, fragment and action but the sign-in form."""
    authenticator: Authenticator = request.app.state.authenticator
    request.state.signed_in = False
    if authenticator.mode == "api_key":
        sessions: DashboardSessions = request.app.state.dashboard_sessions
        if await sessions.valid(request.cookies.get(COOKIE)):
            request.state.signed_in = True
            return
        try:
            authenticator.check(request)  # a proxy that adds X-API-Key still works
        except HTTPException:
            raise SignInRequired from None
        return
    authenticator.check(request)


async def require_same_origin(request: Request) -> None:
    """Dependency of every POST under /ui (actions, sign-in, sign-out)."""
    if not same_origin(request.url.scheme, request.headers):
        raise CrossSiteRequest
