"""The ``vertex`` provider: Gemini on Vertex AI through ``google-genai``, with the service
account's own identity (Application Default Credentials; no key).

The instruction is the ``system_instruction``, the page content a user turn of its own, and
the schema the JSON response schema (``response_json_schema``, ``application/json``). The
SDK's own retries are off: the stage retries with its own policy (ai_answers.py)."""

from __future__ import annotations

from typing import Any

from google import genai
from google.genai import errors, types

from scrapejobs_worker.ai.model_port import ModelBusy, ModelCall, ModelRefused, ModelReply
from scrapejobs_worker.language_models.retry_after import retry_after_s

PROVIDER = "vertex"


class VertexGeminiModel:
    provider = PROVIDER

    def __init__(
        self,
        project: str,
        location: str,
        *,
        base_url: str | None = None,
        credentials: Any = None,
        timeout_s: float = 120.0,
    ) -> None:
        options = types.HttpOptions(
            base_url=base_url,
            timeout=int(timeout_s * 1000),
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        self._client = genai.Client(
            vertexai=True,
            project=project,
            location=location,
            credentials=credentials,
            http_options=options,
        )

    async def reply(self, call: ModelCall) -> ModelReply:
        system = "\n\n".join(m.content for m in call.messages if m.role == "system")
        contents = [
            types.Content(
                role="model" if m.role == "assistant" else "user",
                parts=[types.Part(text=m.content)],
            )
            for m in call.messages
            if m.role != "system"
        ]
        config = types.GenerateContentConfig(
            system_instruction=system or None,
            response_mime_type="application/json",
            response_json_schema=dict(call.schema),
        )
        try:
            response = await self._client.aio.models.generate_content(
                model=call.model, contents=contents, config=config
            )
        except errors.APIError as exc:
            headers = _headers(exc)
            if exc.code == 429 or exc.code >= 500 or exc.code == 408:
                raise ModelBusy(f"{exc.code}: {exc.message}", retry_after_s(headers)) from exc
            raise ModelRefused(f"{exc.code}: {exc.message}") from exc
        except OSError as exc:  # no connection, a timeout
            raise ModelBusy(f"no answer: {exc}") from exc
        usage = response.usage_metadata
        return ModelReply(
            text=response.text or "",
            model=response.model_version or call.model,
            input_tokens=(usage.prompt_token_count or 0) if usage else 0,
            output_tokens=(usage.candidates_token_count or 0) if usage else 0,
        )

    async def aclose(self) -> None:
        await self._client.aio.aclose()


def _headers(exc: errors.APIError) -> dict[str, str] | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    return {k.lower(): v for k, v in headers.items()} if headers else None
