"""The CLI's key commands (admin keys only): create, ls, revoke."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

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
    if json_output:
        state.emit_json({"keys": [key.model_dump(mode="json") for key in keys]})
        return
    state.out.print(keys_table(keys))


@reports_errors
def revoke(
    ctx: typer.Context,
    key_id: Annotated[str, typer.Argument(help="The key's id (key_...).")],
    json_output: JsonFlag = False,
) -> None:
    """Revoke a key: refused everywhere within seconds, its dashboard sessions end."""
    state = use(ctx, json_output)
    state.client.revoke_key(key_id)
    if json_output:
        state.emit_json({"revoked": key_id})
    else:
        state.out.print(f"revoked {key_id}")


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
