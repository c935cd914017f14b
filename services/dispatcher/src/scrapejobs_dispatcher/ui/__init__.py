"""The web dashboard at /ui: server-rendered pages (Jinja2) kept live by htmx polling, charts
drawn by uPlot; both libraries are vendored under ``static/`` (no Node build step)."""

from __future__ import annotations

from pathlib import Path

import jinja2
from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from scrapejobs_dispatcher.ui import monitor_routes, search_page
from scrapejobs_dispatcher.ui.figure_cache import FigureCache
from scrapejobs_dispatcher.ui.routes import install_refusals, router, sign_in_router
from scrapejobs_dispatcher.ui.sessions import SignInAttempts

HERE = Path(__file__).parent


def install(app: FastAPI, figures: FigureCache) -> None:
    """Serve the dashboard: its routes, its templates (on ``app.state.ui_templates``), its
    static files (on ``app.state.ui_static``, served at /ui/static to anyone: no data), the
    sign-in attempts it allows (``app.state.sign_in_attempts``) and the figures it keeps a few
    seconds (``app.state.ui_figures``). Its sign-in sessions (``DashboardSessions``, used in
    api_key mode) are ``app.state.dashboard_sessions``, set by the app's lifespan (they need
    the store)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    app.state.ui_templates = Jinja2Templates(env=env)
    app.state.ui_static = StaticFiles(directory=HERE / "static")
    app.state.sign_in_attempts = SignInAttempts()
    app.state.ui_figures = figures
    install_refusals(app)
    app.include_router(sign_in_router)
    app.include_router(router)
    app.include_router(monitor_routes.router)
    app.include_router(search_page.router)
