"""Tenants and roles: who owns work, and what a caller may do.

Every job belongs to one tenant (a team); an API key belongs to a tenant and has a role:

* ``member``: the tenant's own work (jobs, results, dead letters, stats, usage);
* ``admin``: everything, every tenant's, maintenance, keys and quotas;
* ``scheduler``: what Cloud Scheduler's triggers need (scheduled submissions, maintenance).

Work written before tenants existed belongs to :data:`DEFAULT_TENANT`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

DEFAULT_TENANT = "default"
TENANT_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,62}$"
_TENANT = re.compile(TENANT_PATTERN)


class Role(StrEnum):
    MEMBER = "member"
    ADMIN = "admin"
    SCHEDULER = "scheduler"


def valid_tenant(name: str) -> bool:
    return bool(_TENANT.fullmatch(name))


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is calling: its tenant and role, and the key it presented (None without one)."""

    tenant: str
    role: Role
    key_id: str | None = None

    @property
    def admin(self) -> bool:
        return self.role is Role.ADMIN

    def sees(self, tenant: str | None) -> bool:
        """Whether this caller may see work of ``tenant`` (None: work from before tenants)."""
        return self.admin or (tenant or DEFAULT_TENANT) == self.tenant

    def scope(self, requested: str | None = None) -> str | None:
        """The tenant a list or a count is limited to: a member's own; an admin's filter
        (None: every tenant's)."""
        return requested if self.admin else self.tenant
