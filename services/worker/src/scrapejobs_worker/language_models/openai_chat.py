"""The ``openai`` provider: any server speaking OpenAI's chat completions protocol (OpenAI,
vLLM, llama.cpp's server, Ollama), through the ``openai`` package.

The instruction is the system message and the page content a user message of its own; the
schema goes as ``response_format: json_schema`` (structured output). The SDK's own retries are
off: the stage retries with its own policy, honouring ``Retry-After`` (ai_answers.py)."""

from __future__ import annotations

from typing import Any

import openai

from scrapejobs_worker.ai.model_port import ModelBusy, ModelCall, ModelRefused, ModelReply
from scrapejobs_worker.language_models.retry_after import retry_after_s

PROVIDER = "openai"


class OpenAIChatModel:
    provider = PROVIDER

    def __init__(self, base_url: str, api_key: str, timeout_s: float = 120.0) -> None:
        # a local server needs no key, but the SDK insists on one
        self._client = openai.AsyncOpenAI(
            base_url=base_url or None,
            api_key=api_key or "no-key",
            max_retries=0,
            timeout=timeout_s,
        )

    async def reply(self, call: ModelCall) -> ModelReply:
        # the SDK's TypedDicts, built from our plain values
        messages: Any = [{"role": m.role, "content": m.content} for m in call.messages]
        response_format: Any = {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": dict(call.schema)},
        }
        try:
            completion = await self._client.chat.completions.create(
                model=call.model, messages=messages, response_format=response_format
            )
        except (openai.RateLimitError, openai.InternalServerError) as exc:
            headers = dict(exc.response.headers) if exc.response is not None else None
            raise ModelBusy(f"{exc.status_code}: {exc.message}", retry_after_s(headers)) from exc
        except openai.APIStatusError as exc:
            if exc.status_code in (408, 409) or exc.status_code >= 500:
                raise ModelBusy(f"{exc.status_code}: {exc.message}") from exc
            raise ModelRefused(f"{exc.status_code}: {exc.message}") from exc
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            raise ModelBusy(f"no answer: {exc}") from exc
        if not completion.choices:
            raise ModelBusy("an answer without choices")
        usage = completion.usage
        return ModelReply(
            text=completion.choices[0].message.content or "",
            model=completion.model or call.model,
            input_tokens=usage.prompt_tokens if usage else 0,
            output_tokens=usage.completion_tokens if usage else 0,
        )

    async def aclose(self) -> None:
        await self._client.close()
