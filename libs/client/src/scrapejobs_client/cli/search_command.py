"""The CLI's search command: the deployment's search provider's results (Firecrawl's
``/v2/search``), and with --scrape each web and news result scraped through the queue."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from scrapejobs_client.cli.arguments import JsonFlag
from scrapejobs_client.cli.state import reports_errors, use


@reports_errors
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to search for.", show_default=False)],
    limit: Annotated[int, typer.Option(min=1, max=100, help="Results per source.")] = 5,
    source: Annotated[
        list[str] | None,
        typer.Option("--source", help="web (default), news or images; again for more."),
    ] = None,
    scrape: Annotated[
        bool, typer.Option("--scrape", help="Scrape the results through the queue (markdown).")
    ] = False,
    timeout: Annotated[float, typer.Option(help="Seconds for the search and scraping.")] = 60.0,
    json_output: JsonFlag = False,
) -> None:
    """Search the web through the deployment's search provider; with --scrape, each web and
    news result is scraped too (one job) and its markdown's length shown."""
    state = use(ctx, json_output)
    found = state.client.search(
        query,
        limit=limit,
        sources=source or ["web"],
        scrape_formats=["markdown"] if scrape else None,
        timeout_ms=round(timeout * 1000),
    )
    if json_output:
        state.emit_json(found.model_dump(mode="json", by_alias=True))
        return
    table = Table("#", "source", "title", "url", *(["scraped"] if scrape else []), box=None)
    for name, items in found.data.items():
        for item in items:
            row = [str(item.get("position", "")), name, escape(str(item.get("title") or ""))]
            row.append(escape(str(item.get("url") or "")))
            if scrape:
                error = (item.get("metadata") or {}).get("error")
                markdown = item.get("markdown")
                row.append(f"{len(markdown)} chars" if markdown else escape(error or "no"))
            table.add_row(*row)
    state.out.print(table)
    if found.warning:
        state.out.print(f"warning: {escape(found.warning)}")
