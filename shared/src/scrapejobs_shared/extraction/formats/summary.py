"""The ``summary`` format (Firecrawl's): a few sentences saying what the page is about, written by
the deployment's language model from the page's main content. It is answered by an ``ai`` stage
(``stage``) that the job runs on the processing lane: the result holds
``data["summary"] = {"text": ...}``, Firecrawl's ``Document`` the text. A job has at most one
``ai`` stage: ``summary`` is not combined with another."""

from __future__ import annotations

from pydantic import JsonValue

from .page_format import StageFormat

PROMPT = (
    "Summarize the page in a few sentences (at most 120 words): what it is and what it says. "
    "Write plain prose in the page's own language."
)


class Summary(StageFormat):
    name = "summary"
    firecrawl = "summary"
    description = "a few sentences about the page, by the deployment's language model"
    stage = {
        "prompt": PROMPT,
        "schema": {
            "type": "object",
            "properties": {"text": {"type": "string", "maxLength": 2000}},
            "required": ["text"],
            "additionalProperties": False,
        },
        "input": "markdown",
        "into": "summary",
    }

    def document(self, value: JsonValue) -> JsonValue:
        return value.get("text") if isinstance(value, dict) else value
