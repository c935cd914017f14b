"""Pub/Sub push endpoints: 2xx acks, anything else nacks and Pub/Sub retries with backoff."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse

from scrapejobs_shared.messaging.task_message import MalformedMessage, decode_push
from scrapejobs_shared.messaging.topology import DEAD_LETTER_PATH, PUSH_PATH, WEBHOOK_PATH
from scrapejobs_worker.delivery.push_guard import require_push_identity
from scrapejobs_worker.delivery.verdict import Verdict
from scrapejobs_worker.lanes.batch_processor import BatchProcessor
from scrapejobs_worker.lanes.lane_table import LaneTable
from scrapejobs_worker.lanes.webhook_sender import WebhookSender

router = APIRouter(tags=["pubsub"], dependencies=[Depends(require_push_identity)])


def _processor(request: Request) -> BatchProcessor:
    processor: BatchProcessor = request.app.state.processor
    return processor


def _answer(verdict: Verdict) -> Response:
    if verdict.ack:
        return Response(status_code=204)
    return JSONResponse({"retry": verdict.reason}, status_code=503)


async def _handle(request: Request, dead_letter: bool) -> Response:
    body = await request.body()
    processor = _processor(request)
    try:
        pushed = decode_push(body)
    except MalformedMessage as exc:
        await processor.reject_envelope(body, str(exc))
        return Response(status_code=204)
    if dead_letter:
        return _answer(await processor.handle_dead_letter(pushed))
    lanes: LaneTable = request.app.state.lanes
    return _answer(await lanes.lane_of(pushed).handle_push(pushed))


@router.post(PUSH_PATH, status_code=204)
async def push(request: Request) -> Response:
    """A batch delivery. Malformed envelopes are recorded and acked: they never crash-loop."""
    return await _handle(request, dead_letter=False)


@router.post(DEAD_LETTER_PATH, status_code=204)
async def dead_letter(request: Request) -> Response:
    """A batch Pub/Sub gave up on after max delivery attempts: its open tasks end
    dead-lettered."""
    return await _handle(request, dead_letter=True)


@router.post(WEBHOOK_PATH, status_code=204)
async def webhook(request: Request) -> Response:
    """A job's webhook event to deliver: acked once delivered (or given up on), nacked while
    the receiver does not answer 2xx, so Pub/Sub retries it with backoff."""
    body = await request.body()
    sender: WebhookSender = request.app.state.webhooks
    try:
        pushed = decode_push(body)
    except MalformedMessage as exc:
        await _processor(request).reject_envelope(body, str(exc))
        return Response(status_code=204)
    return _answer(await sender.handle(pushed))
