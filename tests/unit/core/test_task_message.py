from __future__ import annotations

import base64
import json

import pytest

from scrapejobs_shared.messaging.task_message import (
    MAX_BATCH_SIZE,
    BatchMessage,
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
    assert pushed.batch() == batch
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
    ],
)
def test_malformed_payloads(payload: bytes) -> None:
    pushed = decode_push(_body(base64.b64encode(payload).decode()))
    with pytest.raises(MalformedMessage):
        pushed.batch()


def test_a_batch_holds_at_most_max_batch_size_tasks() -> None:
    refs = [{"id": f"t{n}", "url": "http://a.example/"} for n in range(MAX_BATCH_SIZE + 1)]
    payload = json.dumps({"job_id": "j", "batch_id": "b", "tasks": refs}).encode()
    pushed = decode_push(_body(base64.b64encode(payload).decode()))
    with pytest.raises(MalformedMessage):
        pushed.batch()
