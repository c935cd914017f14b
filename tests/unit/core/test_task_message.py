from __future__ import annotations

import base64
import json

import pytest

from scrapejobs_shared.messaging.task_message import MalformedMessage, TaskMessage, decode_push


def _body(data: object, **envelope: object) -> bytes:
    message = {"data": data, "messageId": "42", "attributes": {"traceparent": "x"}}
    return json.dumps({"message": message, "subscription": "s", **envelope}).encode()


def test_round_trip() -> None:
    task = TaskMessage(job_id="j1", task_id="t1", url="http://a.example/")
    pushed = decode_push(_body(base64.b64encode(task.encode()).decode(), deliveryAttempt=3))
    assert pushed.task() == task
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
        b'{"job_id": "j", "task_id": "t"}',
        b'{"job_id": "../x", "task_id": "t", "url": "u"}',
    ],
)
def test_malformed_payloads(payload: bytes) -> None:
    pushed = decode_push(_body(base64.b64encode(payload).decode()))
    with pytest.raises(MalformedMessage):
        pushed.task()
