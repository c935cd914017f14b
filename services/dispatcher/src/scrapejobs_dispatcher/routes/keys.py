"""REST resources: /v1/keys (API keys made, listed and revoked at run time; admin keys only)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import HTTPException, Path, Query, Response
from pydantic import BaseModel, ConfigDict, Field

from scrapejobs_dispatcher.dependencies import KeyringDep
from scrapejobs_dispatcher.edge.record_view import RecordView
from scrapejobs_dispatcher.routes.jobs import ERRORS
from scrapejobs_dispatcher.routes.native_router import native_router
from scrapejobs_dispatcher.tenants.authentication import AdminDep
from scrapejobs_shared.domain.tenancy import TENANT_PATTERN, Role

router = native_router("/v1/keys", "keys")
KEY_ID = r"^key_[0-9a-f]{16}$"


class KeyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    tenant: str = Field(pattern=TENANT_PATTERN, description="The tenant (team) the key acts for")
    role: Role = Field(
        default=Role.MEMBER,
        strict=False,  # the role's name, as JSON has no enums
        description="member: the tenant's own work; admin: everything, every tenant's, "
        "maintenance, keys and quotas; scheduler: scheduled submissions and maintenance",
    )
    name: str = Field(
        default="", max_length=200, pattern=r"^[^\x00-\x1f\x7f]*$", description="What it is for"
    )


class KeyView(RecordView):
    id: str
    name: str
    tenant: str
    role: Role
    created_at: datetime
    last_used_at: datetime | None = Field(description="Within about an hour")


class CreatedKey(KeyView):
    key: str = Field(description="The key itself: shown this once, never again (keep it safe)")


class KeyList(BaseModel):
    keys: list[KeyView]


KEY_ERRORS: dict[int | str, dict[str, Any]] = {
    code: spec for code, spec in ERRORS.items() if code not in (409,)
}


@router.post("", status_code=201, response_model=CreatedKey, responses=KEY_ERRORS)
async def create_key(body: KeyRequest, keyring: KeyringDep, _: AdminDep) -> CreatedKey:
    """A new key for ``tenant`` with ``role``; it works at once, on every instance. The answer
    is the only time the key is shown: only its SHA-256 digest is stored."""
    made = await keyring.create(body.tenant, body.role, body.name)
    return CreatedKey(key=made.key, **KeyView.of(made.record).model_dump())


@router.get("", response_model=KeyList, responses=KEY_ERRORS)
async def list_keys(
    keyring: KeyringDep,
    _: AdminDep,
    tenant: Annotated[str | None, Query(pattern=TENANT_PATTERN)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> KeyList:
    """Keys made at run time, newest first (never the keys themselves); bootstrap keys of
    ``SCRAPEJOBS_API_KEY_HASHES`` are not listed."""
    return KeyList(keys=[KeyView.of(record) for record in await keyring.listed(tenant, limit)])


@router.delete("/{key_id}", status_code=204, response_class=Response, responses=KEY_ERRORS)
async def revoke_key(
    key_id: Annotated[str, Path(pattern=KEY_ID)], keyring: KeyringDep, _: AdminDep
) -> Response:
    """Revoke the key: refused on every instance within a few seconds (each instance trusts
    what it read of a key for ``RECHECK_S``), and its dashboard sessions end with it."""
    if not await keyring.revoke(key_id):
        raise HTTPException(404, f"no key {key_id}")
    return Response(status_code=204)
