"""The Pub/Sub message format: a batch of URL tasks of one job as JSON data, plus attributes
(trace context, deferral count). Submissions coalesced in one commit travel as one
``BundleMessage``: the batches of several small jobs, each with its job's spec, so that one
push (the unit Pub/Sub paces) carries many pages however the work was submitted."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.tenancy import TENANT_PATTERN
from scrapejobs_shared.errors import InvalidInput, first_problem

FORMAT_VERSION = "2"
MAX_BATCH_SIZE = 500  # URLs per message (one Firestore commit holds at most 500 writes)
MAX_BUNDLE = 100  # batches per bundle message
MAX_CLAIM_TOKEN = 200_000  # characters (a batch of 500 URLs of 256 characters, with ids)
_ID = r"^[A-Za-z0-9_\-]+$"


class TaskRef(BaseModel):
    """One URL of a batch, as it travels (its state lives in the batch's record)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = Field(min_length=1, max_length=64, pattern=_ID)
    url: str = Field(min_length=1, max_length=2048)


class BatchMessage(BaseModel):
    """A batch of tasks of one job: the unit Pub/Sub delivers and a worker claims."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    job_id: str = Field(min_length=1, max_length=64, pattern=_ID)
    batch_id: str = Field(min_length=1, max_length=64, pattern=_ID)
    tasks: tuple[TaskRef, ...] = Field(min_length=1, max_length=MAX_BATCH_SIZE)
    # The job's spec, carried by the batches of coalesced small jobs: the worker need not read
    # the job (absent otherwise: the worker reads it once per job and process).
    spec: JobSpec | None = None
    # The job's tenant: the page cache is kept per tenant (absent in messages from before it:
    # such a batch reuses no page)
    tenant: str | None = Field(default=None, max_length=63, pattern=TENANT_PATTERN)
    # What the store answered when it created a job that holds its batch: the first claim
    # needs no read (opaque; a stale or foreign token only costs the claim its read).
    claim_token: str | None = Field(default=None, max_length=MAX_CLAIM_TOKEN)

    def encode(self) -> bytes:
        return self.model_dump_json(exclude_none=True).encode()


class BundleMessage(BaseModel):
    """The batches of several jobs in one message (coalesced submissions): a worker runs them
    side by side within one push, each claimed and settled as a batch of its own."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    batches: tuple[BatchMessage, ...] = Field(min_length=1, max_length=MAX_BUNDLE)

    def encode(self) -> bytes:
        return self.model_dump_json(exclude_none=True).encode()


TaskMessage = BatchMessage | BundleMessage


class MalformedMessage(InvalidInput):
    """A push body or task payload that can never be processed; it is recorded and acked."""


@dataclass(frozen=True, slots=True)
class PushedMessage:
    """A decoded Pub/Sub push delivery."""

    message_id: str
    data: bytes
    attributes: Mapping[str, str]
    subscription: str
    delivery_attempt: int | None  # absent on the emulator and without a dead-letter policy

    def batches(self) -> tuple[BatchMessage, ...]:
        """The batches the message carries: one, or a bundle's."""
        try:
            payload = json.loads(self.data)
        except (ValueError, UnicodeDecodeError):
            raise MalformedMessage("invalid task payload: not JSON") from None
        try:
            if isinstance(payload, dict) and "batches" in payload:
                return BundleMessage.model_validate(payload).batches
            return (BatchMessage.model_validate(payload),)
        except ValidationError as exc:
            raise MalformedMessage(f"invalid task payload: {_first_error(exc)}") from None


def decode_push(body: bytes) -> PushedMessage:
    """Decode a push request body; raise MalformedMessage on anything unexpected."""
    try:
        envelope = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise MalformedMessage("push body is not JSON") from None
    message = envelope.get("message") if isinstance(envelope, dict) else None
    if not isinstance(message, dict):
        raise MalformedMessage("push body has no 'message' object")
    attributes = message.get("attributes")
    attributes = {} if attributes is None else attributes
    if not isinstance(attributes, dict):
        raise MalformedMessage("message attributes are not an object")
    attempt = envelope.get("deliveryAttempt")
    return PushedMessage(
        message_id=str(message.get("messageId") or message.get("message_id") or ""),
        data=_decode_data(message.get("data")),
        attributes={str(k): str(v) for k, v in attributes.items()},
        subscription=str(envelope.get("subscription") or ""),
        delivery_attempt=attempt if isinstance(attempt, int) else None,
    )


def _decode_data(data: object) -> bytes:
    if data is None:
        return b""
    if not isinstance(data, str):
        raise MalformedMessage("message data is not a base64 string")
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise MalformedMessage("message data is not valid base64") from None


def _first_error(exc: ValidationError) -> str:
    field, problem = first_problem(exc.errors(), default="payload")
    return f"{field}: {problem}"
