"""The CLI's tenant commands: keys (create, ls, revoke), quotas and proxy pools (admin keys),
usage."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from scrapejobs_client.cli.arguments import JsonFlag
from scrapejobs_client.cli.render import when
from scrapejobs_client.cli.state import reports_errors, use
from scrapejobs_client.models import ApiKey


class Role(StrEnum):
    member = "member"
    admin = "admin"
    scheduler = "scheduler"


@reports_errors
def create(
    ctx: typer.Context,
    tenant: Annotated[str, typer.Argument(help="The tenant (team) the key acts for.")],
    role: Annotated[Role, typer.Option(help="member, admin or scheduler.")] = Role.member,
    name: Annotated[str, typer.Option(help="What the key is for.")] = "",
    json_output: JsonFlag = False,
) -> None:
    """Make a key: printed this once (only its digest is kept)."""
    state = use(ctx, json_output)
    made = state.client.create_key(tenant, role.value, name)
    if json_output:
        state.emit_json(made.model_dump(mode="json"))
        return
    state.err.print(f"key {made.id} for tenant {made.tenant} ({made.role}); it is shown once:")
    state.out.print(made.key, markup=False, highlight=False)


@reports_errors
def ls(
    ctx: typer.Context,
    tenant: Annotated[str | None, typer.Option(help="Of this tenant.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="Keys at most.")] = 200,
    json_output: JsonFlag = False,
) -> None:
    """Keys made at run time, newest first (ids, never the keys)."""
    state = use(ctx, json_output)
    keys = state.client.list_keys(tenant, limit)
    state.answer({"keys": [key.model_dump(mode="json") for key in keys]}, keys_table(keys))


@reports_errors
def revoke(
    ctx: typer.Context,
    key_id: Annotated[str, typer.Argument(help="The key's id (key_...).")],
    json_output: JsonFlag = False,
) -> None:
    """Revoke a key: refused everywhere within seconds, its dashboard sessions end."""
    state = use(ctx, json_output)
    state.client.revoke_key(key_id)
    state.answer({"revoked": key_id}, f"revoked {key_id}")


def keys_table(keys: list[ApiKey]) -> Table:
    table = Table("id", "tenant", "role", "name", "created", "last used", box=None)
    for key in keys:
        table.add_row(
            escape(key.id),
            escape(key.tenant),
            key.role,
            escape(key.name),
            when(key.created_at),
            when(key.last_used_at),
        )
    return table


@reports_errors
def usage(
    ctx: typer.Context,
    tenant: Annotated[str | None, typer.Option(help="Of this tenant (admin keys).")] = None,
    json_output: JsonFlag = False,
) -> None:
    """Pages fetched today (UTC), in flight, the quota, and the searches asked: the key's
    tenant's (an admin key: every tenant's, or --tenant's)."""
    state = use(ctx, json_output)
    figures = state.client.usage(tenant)
    if json_output:
        state.emit_json({"usage": [entry.model_dump(mode="json") for entry in figures]})
        return
    table = Table(
        "tenant",
        "pages today",
        "per day",
        "in flight",
        "at once",
        "ai tokens",
        "searches",
        box=None,
    )
    for entry in figures:
        table.add_row(
            escape(entry.tenant),
            str(entry.pages_today),
            str(entry.quota.pages_per_day or "no limit"),
            str(entry.pages_in_flight),
            str(entry.quota.pages_in_flight or "no limit"),
            str(entry.ai_tokens),
            f"{entry.searches} ({entry.search_credits} credits)" if entry.searches else "0",
        )
    state.out.print(table)


@reports_errors
def quota(
    ctx: typer.Context,
    tenant: Annotated[str, typer.Argument(help="The tenant.")],
    pages_per_day: Annotated[int, typer.Option(min=0, help="Pages per UTC day (0: no limit).")],
    pages_in_flight: Annotated[int, typer.Option(min=0, help="Pages at once (0: no limit).")] = 0,
    json_output: JsonFlag = False,
) -> None:
    """Set a tenant's own quota (admin keys)."""
    state = use(ctx, json_output)
    set_quota = state.client.set_quota(tenant, pages_per_day, pages_in_flight)
    if json_output:
        state.emit_json(set_quota.model_dump(mode="json"))
    else:
        state.out.print(
            f"{set_quota.tenant}: {set_quota.quota.pages_per_day or 'no limit'} pages a day, "
            f"{set_quota.quota.pages_in_flight or 'no limit'} at once"
        )


@reports_errors
def proxies(
    ctx: typer.Context,
    tenant: Annotated[str, typer.Argument(help="The tenant.")],
    file: Annotated[
        Path | None,
        typer.Option(
            "--file",
            exists=True,
            dir_okay=False,
            help="Give the tenant this pool: a JSON list of {url, country, tier}, as "
            "SCRAPEJOBS_PROXIES (credentials in the URLs are kept, never shown).",
        ),
    ] = None,
    remove: Annotated[
        bool, typer.Option("--remove", help="Take its pool away (the deployment's again).")
    ] = False,
    json_output: JsonFlag = False,
) -> None:
    """The proxies a tenant's jobs go through: show them, give it a pool of its own (--file),
    or take it away (--remove). Admin keys, where SCRAPEJOBS_TENANT_PROXIES is on."""
    state = use(ctx, json_output)
    if file is not None and remove:
        raise typer.BadParameter("--file or --remove, not both")
    if file is not None:
        pool = state.client.set_tenant_proxies(tenant, read_proxy_list(file))
    elif remove:
        pool = state.client.remove_tenant_proxies(tenant)
    else:
        pool = state.client.tenant_proxies(tenant)
    if json_output:
        state.emit_json(pool.model_dump(mode="json"))
        return
    whose = "its own pool" if pool.own_pool else "the deployment's pools"
    state.out.print(f"{escape(pool.tenant)}: {whose}")
    table = Table("proxy", "country", "tier", box=None)
    for entry in pool.proxies:
        table.add_row(escape(entry.proxy), entry.country or "any", entry.tier)
    state.out.print(table)


def read_proxy_list(file: Path) -> list[dict[str, Any]]:
    """The JSON list of a pool's file (its entries checked by the API, which names the one at
    fault without its credentials)."""
    try:
        entries = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise typer.BadParameter(f"{file} is not a JSON list: {exc}") from None
    if not isinstance(entries, list):
        raise typer.BadParameter(f"{file} is not a JSON list of proxies")
    return [{"url": entry} if isinstance(entry, str) else entry for entry in entries]
