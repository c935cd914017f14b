from __future__ import annotations

import base64
import json

import pytest

from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.messaging.task_message import (
    MAX_BATCH_SIZE,
    MAX_BUNDLE,
    BatchMessage,
    BundleMessage,
    MalformedMessage,
    TaskRef,
    decode_push,
)


def _body(data: object, **envelope: object) -> bytes:
    message = {"data": data, "messageId": "42", "attributes": {"traceparent": "x"}}
    return json.dumps({"message": message, "subscription": "s", **envelope}).encode()


def test_round_trip() -> None:
    refs = (TaskRef(id="t1", url="http://a.example/"), TaskRef(id="t2", url="http://b.example/"))
    batch = BatchMessage(job_id="j1", batch_id="b1", tasks=refs)
    pushed = decode_push(_body(base64.b64encode(batch.encode()).decode(), deliveryAttempt=3))
    assert pushed.batches() == (batch,)
    assert pushed.message_id == "42" and pushed.delivery_attempt == 3
    assert pushed.attributes == {"traceparent": "x"}


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[]",
        json.dumps({"message": "x"}).encode(),
        _body(123),
        _body("!!!not base64!!!"),
        json.dumps({"message": {"data": "", "attributes": []}}).encode(),
    ],
)
def test_malformed_envelopes(body: bytes) -> None:
    with pytest.raises(MalformedMessage):
        decode_push(body)


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"{}",
        b'{"job_id": "j", "task_id": "t", "url": "u"}',
        b'{"job_id": "j", "batch_id": "b", "tasks": []}',
        b'{"job_id": "j", "batch_id": "b", "tasks": [{"id": "t"}]}',
        b'{"job_id": "../x", "batch_id": "b", "tasks": [{"id": "t", "url": "u"}]}',
        b'{"job_id": "j", "batch_id": "b/c", "tasks": [{"id": "t", "url": "u"}]}',
        b'{"batches": []}',
        b'{"batches": [{"job_id": "j", "batch_id": "b", "tasks": []}]}',
        b'{"batches": "x"}',
        b'{"job_id": "j", "batch_id": "b", "tasks": [{"id": "t", "url": "u"}], "spec": 3}',
    ],
)
def test_malformed_payloads(payload: bytes) -> None:
    pushed = decode_push(_body(base64.b64encode(payload).decode()))
    with pytest.raises(MalformedMessage):
        pushed.batches()


def test_a_batch_holds_at_most_max_batch_size_tasks() -> None:
    refs = [{"id": f"t{n}", "url": "http://a.example/"} for n in range(MAX_BATCH_SIZE + 1)]
    payload = json.dumps({"job_id": "j", "batch_id": "b", "tasks": refs}).encode()
    pushed = decode_push(_body(base64.b64encode(payload).decode()))
    with pytest.raises(MalformedMessage):
        pushed.batches()


def _pushed(message: BatchMessage | BundleMessage) -> list[BatchMessage]:
    return list(decode_push(_body(base64.b64encode(message.encode()).decode())).batches())


def test_a_bundle_carries_several_jobs_batches_with_their_specs() -> None:
    spec = JobSpec.model_validate(
        {
            "extract": {"title": {"css": "h1::text"}},
            "options": {"formats": ["links"], "per_host_concurrency": 2},
            "pipeline": [{"validate": {"schema": {"type": "object", "required": ["title"]}}}],
        }
    )
    batches = tuple(
        BatchMessage(
            job_id=f"j{n}",
            batch_id=f"b{n}",
            tasks=(TaskRef(id=f"t{n}", url=f"http://a.example/{n}"),),
            spec=spec if n % 2 else None,
        )
        for n in range(3)
    )
    assert _pushed(BundleMessage(batches=batches)) == list(batches)
    [carried] = _pushed(batches[1])
    assert carried.spec == spec  # the spec travels whole: extraction, options, pipeline


def test_a_bundle_holds_at_most_max_bundle_batches() -> None:
    one = {"job_id": "j", "batch_id": "b", "tasks": [{"id": "t", "url": "http://a.example/"}]}
    payload = json.dumps({"batches": [one] * (MAX_BUNDLE + 1)}).encode()
    pushed = decode_push(_body(base64.b64encode(payload).decode()))
    with pytest.raises(MalformedMessage):
        pushed.batches()
