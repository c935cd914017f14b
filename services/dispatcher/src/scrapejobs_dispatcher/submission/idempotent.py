"""``Idempotency-Key`` on job submission (IETF httpapi draft): the same key and the same body
return the original job; the same key with another body is refused (422); a request that
arrives while the first with its key is still being submitted is refused (409). Keys are scoped
to the caller (its API key, when it uses one) and kept ``ttl`` (24 h by default).

The job's id is derived from the key, so a submission whose process died after its commit but
before its answer is found again, never submitted twice: a retry while the key still reads in
flight returns that job when it exists, and a retry after the reservation went stale submits
the same id, which the store refuses.

A job small enough to be coalesced (one batch: a one-URL job above all) takes no reservation:
its creation, in the commit of its coalesced group, is what holds the key (the id is the
key's), and the job keeps the request body's fingerprint, so a retry with the key finds the job
and compares bodies. Two requests with one key at once then both answer the job (the second
finds it created) instead of one 409."""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass, replace
from datetime import timedelta

from scrapejobs_dispatcher.jobs.job_errors import JobNotFound, SubmissionUnconfirmed
from scrapejobs_dispatcher.jobs.job_service import JobView
from scrapejobs_dispatcher.submission.intake import JobIntake
from scrapejobs_dispatcher.submission.submission import Submission
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.errors import Conflict, InvalidInput
from scrapejobs_shared.ports.dependency_unavailable import DependencyUnavailable
from scrapejobs_shared.ports.idempotency import Done, IdempotencyKeys, InFlight, Mismatch

MAX_KEY_LENGTH = 255


class InvalidIdempotencyKey(InvalidInput):
    status = 400
    code = "invalid_idempotency_key"
    field = "Idempotency-Key"


class IdempotencyKeyReused(InvalidInput):
    """The key was used before with another request body."""

    code = "idempotency_key_reused"
    field = "Idempotency-Key"

    template = "Idempotency-Key {} was used with another request body"


class IdempotencyKeyInFlight(Conflict):
    """A request with this key is still being processed."""

    code = "idempotency_key_in_flight"
    field = "Idempotency-Key"

    template = "a request with Idempotency-Key {} is still being processed: retry later"


@dataclass(frozen=True, slots=True)
class Submitted:
    view: JobView
    replayed: bool  # the job an earlier request with this key created


@dataclass(eq=False)
class IdempotentSubmission:
    jobs: JobIntake
    keys: IdempotencyKeys
    clock: Clock
    ttl: timedelta
    stale_after: timedelta = timedelta(minutes=2)

    async def submit(self, submission: Submission, key: str | None = None) -> Submitted:
        """The one way in: ``submission`` stored and published (``JobIntake.submit``), once
        per ``key`` when one is given. Keys are the tenant's own (two tenants' equal keys are
        two submissions)."""
        if key is None:
            return Submitted(await self.jobs.submit(submission), replayed=False)
        request, tenant = submission.request, submission.tenant
        if not 1 <= len(key) <= MAX_KEY_LENGTH or not key.isprintable() or not key.isascii():
            raise InvalidIdempotencyKey("Idempotency-Key must be 1-255 printable ASCII characters")
        digest = hashlib.sha256(f"{tenant}\x00{key}".encode()).hexdigest()
        body = json.dumps(request.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        keyed = replace(
            submission,
            job_id=digest[:32],
            key_fingerprint=hashlib.sha256(body.encode()).hexdigest(),
        )
        if self.jobs.coalesces(request):
            submitted = await self._in_one_commit(keyed, key)
            if submitted is not None:
                return submitted
        return await self._reserved(keyed, key, digest)

    async def _in_one_commit(self, keyed: Submission, key: str) -> Submitted | None:
        """A job the coalescer creates needs no reservation: the commit that creates it (its
        id is the key's) is the key's, and the job keeps the body's fingerprint. A retry finds
        the job: the same body replays it, another is the key reused. None: a job created
        before jobs kept fingerprints, which the key's own document decides."""
        view = await self.jobs.submit(keyed)
        if view.created:
            return Submitted(view, replayed=False)
        if view.job.key_fingerprint is None:
            return None
        if view.job.key_fingerprint != keyed.key_fingerprint:
            raise IdempotencyKeyReused(key)
        return Submitted(view, replayed=True)

    async def _reserved(self, keyed: Submission, key: str, digest: str) -> Submitted:
        """Any other job: the key is reserved first (a second request while the first is
        still being submitted is refused), then the job submitted, then the key completed."""
        assert keyed.job_id is not None and keyed.key_fingerprint is not None
        tenant, job_id, fingerprint = keyed.tenant, keyed.job_id, keyed.key_fingerprint
        now = self.clock()
        try:
            reservation = await self.keys.reserve(
                digest, fingerprint, now, now + self.ttl, self.stale_after
            )
        except DependencyUnavailable as exc:
            raise SubmissionUnconfirmed(job_id, exc, stored=False) from exc
        if isinstance(reservation, Mismatch):
            raise IdempotencyKeyReused(key)
        if isinstance(reservation, InFlight):
            try:  # its process may have died after the commit: the job answers for it
                view = await self.jobs.existing(job_id, tenant)
            except JobNotFound:
                raise IdempotencyKeyInFlight(key) from None
            await self.keys.complete(digest, job_id, self.clock())
            return Submitted(view, replayed=True)
        if isinstance(reservation, Done):  # the key's job is of the key's tenant
            return Submitted(await self.jobs.get(reservation.job_id, None), replayed=True)
        try:
            view = await self.jobs.submit(keyed)
        except BaseException:
            # the store may be what failed: then the key stays reserved until it goes stale,
            # and a retry meanwhile finds the job, if it was stored, by its derived id
            with contextlib.suppress(DependencyUnavailable):
                await self.keys.release(digest)
            raise
        if not view.created and view.job.key_fingerprint not in (None, fingerprint):
            await self.keys.release(digest)  # a coalesced job's key, used with another body
            raise IdempotencyKeyReused(key)
        await self.keys.complete(digest, view.job.id, self.clock())
        return Submitted(view, replayed=not view.created)
