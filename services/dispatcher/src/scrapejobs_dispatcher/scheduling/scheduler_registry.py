"""The Cloud Scheduler triggers a scheduler key may send: the schedules Terraform made.

``SCRAPEJOBS_SCHEDULES`` names each Cloud Scheduler job (``X-CloudScheduler-JobName``) with the
tenant its jobs belong to and the SHA-256 of the body it POSTs (Terraform computes both from
``var.schedules``). A caller of the scheduler role may then submit only those: a registered
job name, for its tenant, with its body byte for byte; anything else is a 403 naming what did
not match. Without a registry (local development), a scheduler key submits only for its own
tenant. Admins are not held to it (they may submit anything anyway)."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from scrapejobs_dispatcher.scheduling.scheduler_trigger import SchedulerTrigger
from scrapejobs_shared.domain.tenancy import TENANT_PATTERN, Caller, Role
from scrapejobs_shared.errors import NotAllowed


class RegisteredSchedule(BaseModel):
    tenant: str = Field(pattern=TENANT_PATTERN)
    body_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


_REGISTRY = TypeAdapter(dict[str, RegisteredSchedule])


class TriggerRefused(NotAllowed):
    """A scheduler's submission that is not a registered schedule's: a 403."""


@dataclass(frozen=True, slots=True)
class SchedulerRegistry:
    schedules: dict[str, RegisteredSchedule]

    @classmethod
    def parse(cls, raw: str) -> SchedulerRegistry:
        """``SCRAPEJOBS_SCHEDULES`` (``ValueError`` when malformed)."""
        if not raw.strip():
            return cls({})
        try:
            return cls(_REGISTRY.validate_json(raw))
        except ValidationError as exc:
            raise ValueError(f"SCRAPEJOBS_SCHEDULES is not a valid registry: {exc}") from None

    def check(self, caller: Caller, trigger: SchedulerTrigger, tenant: str, body: bytes) -> None:
        """``TriggerRefused`` unless a scheduler ``caller`` may submit ``body`` for ``tenant``
        as ``trigger``."""
        if caller.role is not Role.SCHEDULER:
            return
        if not self.schedules:
            if tenant != caller.tenant:
                raise TriggerRefused(
                    "a scheduler key submits only for its own tenant here (no schedules are "
                    "registered: SCRAPEJOBS_SCHEDULES)"
                )
            return
        # the job's id (a full resource name ends with it)
        registered = self.schedules.get(trigger.job_name.rpartition("/")[2])
        if registered is None:
            raise TriggerRefused(f"{trigger.job_name!r} is not a registered schedule")
        if registered.tenant != tenant:
            raise TriggerRefused(f"schedule {trigger.job_name!r} submits for another tenant")
        digest = hashlib.sha256(body).hexdigest()
        if not hmac.compare_digest(digest, registered.body_sha256):
            raise TriggerRefused(f"this is not the body of schedule {trigger.job_name!r}")
