"""Pub/Sub push endpoints: 2xx acks, anything else nacks and Pub/Sub retries with backoff."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse

from scrapejobs_shared.task_message import MalformedMessage, decode_push
from scrapejobs_shared.topology import DEAD_LETTER_PATH, PUSH_PATH
from scrapejobs_worker.push_guard import require_push_identity
from scrapejobs_worker.task_processor import TaskProcessor
from scrapejobs_worker.verdict import Verdict

router = APIRouter(tags=["pubsub"], dependencies=[Depends(require_push_identity)])


def _processor(request: Request) -> TaskProcessor:
    processor: TaskProcessor = request.app.state.processor
    return processor


def _answer(verdict: Verdict) -> Response:
    if verdict.ack:
        return Response(status_code=204)
    headers = {}
    if verdict.retry_after_s is not None:
        headers["Retry-After"] = str(max(1, round(verdict.retry_after_s)))
    return JSONResponse({"retry": verdict.reason}, status_code=503, headers=headers)


@router.post(PUSH_PATH, status_code=204)
async def push(request: Request) -> Response:
    """A task delivery. Malformed envelopes are recorded and acked: they never crash-loop."""
    body = await request.body()
    try:
        pushed = decode_push(body)
    except MalformedMessage as exc:
        await _processor(request).reject_envelope(body, str(exc))
        return Response(status_code=204)
    return _answer(await _processor(request).handle_push(pushed))


@router.post(DEAD_LETTER_PATH, status_code=204)
async def dead_letter(request: Request) -> Response:
    """A task Pub/Sub gave up on after max delivery attempts: mark it dead-lettered."""
    body = await request.body()
    try:
        pushed = decode_push(body)
    except MalformedMessage as exc:
        await _processor(request).reject_envelope(body, str(exc))
        return Response(status_code=204)
    return _answer(await _processor(request).handle_dead_letter(pushed))
