"""What a job's ``pipeline`` may hold: post-processing stages, validated at submit time.

A pipeline is a list of at most :data:`MAX_STAGES` stages, each an object with exactly one key
naming the stage (``clean``, ``validate``, ``transform`` or ``ai``) whose value holds its
options; at most one ``ai`` stage. They
run in order on each result's ``data`` after extraction (:mod:`.runner`). Models are strict: what
the OpenAPI document says is what is accepted (``0`` is not ``false``). Everything that could
make a stage fail for its own spec (an unknown option, an invalid JSON Schema, a remote
``$ref``, two fields renamed to one name) is refused here, as a pydantic ``ValidationError``,
so the API answers 422 and a job never fails later on its pipeline itself.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    field_validator,
    model_validator,
)
from pydantic.config import JsonDict

from scrapejobs_shared.extraction.spec import FIELD_NAME
from scrapejobs_shared.pipeline.validate import check_schema

MAX_STAGES = 20
MAX_SCHEMA_CHARS = 100_000  # a schema's JSON, as submitted (the job document holds it)
MAX_NAMES = 200  # fields a clean or transform option may list
STAGE_NAMES = ("clean", "validate", "transform", "ai")
MAX_PROMPT_CHARS = 20_000
DEFAULT_MAX_INPUT_CHARS = 50_000
MAX_INPUT_CHARS = 100_000  # kept beside the task until the model answers: one document
AiInput = Literal["markdown", "text", "data"]

CastType = Literal["int", "float", "bool", "str"]
FieldName = Annotated[str, Field(min_length=1, max_length=256)]


class CleanOptions(BaseModel):
    """Tidy extracted text, recursively through lists and objects.

    Per string, in this order: HTML entities unescaped (``&amp;`` → ``&``, ``&nbsp;`` → a
    no-break space), runs of whitespace (any Unicode whitespace, newlines included) collapsed to
    one space, then leading and trailing whitespace trimmed. Then empty values (``null``, ``""``,
    ``[]``, ``{}``, also those that became empty) are dropped from objects and lists. Numbers
    and booleans are kept as they are (``0`` and ``false`` are not empty).
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    unescape_html: bool = Field(default=True, description="Unescape HTML character references")
    collapse_whitespace: bool = Field(
        default=True, description="Collapse runs of whitespace to a single space"
    )
    trim: bool = Field(default=True, description="Strip leading and trailing whitespace")
    drop_empty: bool = Field(
        default=True, description="Drop null, empty strings, empty lists and empty objects"
    )
    fields: list[FieldName] | None = Field(
        default=None,
        max_length=MAX_NAMES,
        description="Top-level fields to clean (default: every field not in 'skip')",
    )
    skip: list[FieldName] = Field(
        default_factory=lambda: ["html"],
        max_length=MAX_NAMES,
        description="Top-level fields left as they are (default: the raw page, 'html')",
    )


class ValidateOptions(BaseModel):
    """Check ``data`` against a JSON Schema; a result that does not conform ends ``failed``
    with reason ``validation`` and the schema errors (never retried)."""

    model_config = ConfigDict(
        extra="forbid", strict=True, serialize_by_alias=True, validate_by_name=True
    )

    json_schema: dict[str, JsonValue] = Field(
        alias="schema",
        description="A JSON Schema object (draft 2020-12 unless '$schema' names another "
        "draft); 'format' is asserted; only local '$ref's ('#...')",
    )

    @field_validator("json_schema")
    @classmethod
    def _schema_is_valid(cls, value: dict[str, JsonValue]) -> dict[str, JsonValue]:
        if len(json.dumps(value)) > MAX_SCHEMA_CHARS:
            raise ValueError(f"schema longer than {MAX_SCHEMA_CHARS} characters of JSON")
        check_schema(value)
        return value


class TransformOptions(BaseModel):
    """Reshape top-level fields, in this order: ``rename`` (all at once, so a swap works; a
    renamed value replaces a field already holding the new name), then ``defaults`` (set when
    the field is missing or null), then ``cast``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    rename: dict[FieldName, FieldName] = Field(
        default_factory=dict, max_length=MAX_NAMES, description="Old field name → new name"
    )
    defaults: dict[FieldName, JsonValue] = Field(
        default_factory=dict,
        max_length=MAX_NAMES,
        description="Field → value when the field is missing or null",
    )
    cast: dict[FieldName, CastType] = Field(
        default_factory=dict,
        max_length=MAX_NAMES,
        description="Field → type; a list is cast item by item, null is left as it is; a value "
        "that cannot be cast fails the task with reason 'validation'",
    )

    @field_validator("rename")
    @classmethod
    def _distinct_targets(cls, value: dict[str, str]) -> dict[str, str]:
        targets = list(value.values())
        clashes = sorted({name for name in targets if targets.count(name) > 1})
        if clashes:
            raise ValueError(f"several fields renamed to {clashes}")
        return value


class AiOptions(BaseModel):
    """Ask a language model about the page: ``prompt`` is the instruction, ``schema`` the JSON
    Schema of the object it must answer with (given to the provider as its structured-output
    format), and the page's ``input`` (its main content as markdown, its visible text, or the
    result's ``data`` so far as JSON) goes in a message of its own, as data, never into the
    instruction. The answer, checked against the schema (one repair request at most), is stored
    in ``data[into]``; later stages see it. Runs on the processing lane."""

    model_config = ConfigDict(
        extra="forbid", strict=True, serialize_by_alias=True, validate_by_name=True
    )

    prompt: str = Field(
        min_length=1, max_length=MAX_PROMPT_CHARS, description="What to ask about the page"
    )
    json_schema: dict[str, JsonValue] = Field(
        alias="schema",
        description='A JSON Schema of an object ("type": "object"): what the answer must be',
        json_schema_extra={"required": ["type"], "properties": {"type": {"const": "object"}}},
    )
    input: AiInput = Field(
        default="markdown",
        description="What the model reads: the page's main content as markdown, its visible "
        "text, or the result's data so far (JSON)",
    )
    into: str = Field(
        default="ai",
        min_length=1,
        max_length=64,
        json_schema_extra={"pattern": FIELD_NAME.pattern},
        description="The data field the answer is stored in (a field name)",
    )
    model: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="The provider's model (default: the deployment's SCRAPEJOBS_AI_MODEL)",
    )
    max_input_chars: int = Field(
        default=DEFAULT_MAX_INPUT_CHARS,
        ge=1,
        le=MAX_INPUT_CHARS,
        description="Input past this many characters is cut (the result says so)",
    )
    cache: bool = Field(
        default=True,
        description="Reuse an answer to the same content, prompt, schema and model (24 h)",
    )

    @field_validator("into")
    @classmethod
    def _a_field_name(cls, value: str) -> str:
        if not FIELD_NAME.match(value):
            raise ValueError("a field name: letters, digits, '_' or '-', not starting with '__'")
        return value

    @field_validator("json_schema")
    @classmethod
    def _schema_of_an_object(cls, value: dict[str, JsonValue]) -> dict[str, JsonValue]:
        if len(json.dumps(value)) > MAX_SCHEMA_CHARS:
            raise ValueError(f"schema longer than {MAX_SCHEMA_CHARS} characters of JSON")
        check_schema(value)
        if value.get("type") != "object":
            raise ValueError('the schema must describe an object ("type": "object")')
        return value


def _one_key_schema(schema: JsonDict) -> None:
    """What ``Stage`` accepts: exactly one of its keys (none of them defaults to anything)."""
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for options in properties.values():
            if isinstance(options, dict):
                options.pop("default", None)
    schema.update(minProperties=1, maxProperties=1)


class Stage(BaseModel):
    """One stage: an object with exactly one of ``clean``, ``validate`` or ``transform``."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        serialize_by_alias=True,
        validate_by_name=True,
        json_schema_extra=_one_key_schema,
    )

    # Exactly one of these is given (``model_fields_set``); the others stay unset, None, a
    # value the API does not accept (so the type says only what may be given, and a bad value
    # is reported at its own path): read a stage through ``name`` and ``options``.
    clean: CleanOptions = Field(
        default=None,  # type: ignore[assignment]
        description="Tidy strings, drop empty values",
    )
    validate_: ValidateOptions = Field(
        default=None,  # type: ignore[assignment]
        alias="validate",
        description="Check a JSON Schema",
    )
    transform: TransformOptions = Field(
        default=None,  # type: ignore[assignment]
        description="Rename fields, set defaults, cast types",
    )
    ai: AiOptions = Field(
        default=None,  # type: ignore[assignment]
        description="Ask a language model, answered in a JSON Schema (the processing lane)",
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> Stage:
        if len(self.model_fields_set) != 1:
            raise ValueError(
                "a stage is an object with exactly one key, 'clean', 'validate', "
                "'transform' or 'ai', whose value is an object of its options"
            )
        return self

    @property
    def name(self) -> str:
        """``clean``, ``validate``, ``transform`` or ``ai``."""
        [field] = self.model_fields_set
        return "validate" if field == "validate_" else field

    @property
    def options(self) -> CleanOptions | ValidateOptions | TransformOptions | AiOptions:
        [field] = self.model_fields_set
        options: CleanOptions | ValidateOptions | TransformOptions | AiOptions = getattr(
            self, field
        )
        return options


Pipeline = list[Stage]


# what check_one_ai_stage enforces, for the OpenAPI document
AT_MOST_ONE_AI_STAGE: JsonDict = {
    "contains": {"type": "object", "required": ["ai"]},
    "minContains": 0,
    "maxContains": 1,
}


def ai_stage_index(stages: Pipeline) -> int | None:
    """Where the pipeline's ``ai`` stage is (None without one)."""
    return next((n for n, stage in enumerate(stages) if stage.name == "ai"), None)


def check_one_ai_stage(stages: Pipeline) -> Pipeline:
    """``stages``; ``ValueError`` when they hold more than one ``ai`` stage."""
    if sum(stage.name == "ai" for stage in stages) > 1:
        raise ValueError("at most one 'ai' stage per pipeline")
    return stages


# a request's pipeline: at most one ai stage (its schema says so too: AT_MOST_ONE_AI_STAGE)
RequestPipeline = Annotated[Pipeline, AfterValidator(check_one_ai_stage)]


def pipeline_to_json(stages: Pipeline) -> str:
    """The pipeline as one JSON string (a JSON Schema may hold what a Firestore map cannot:
    arrays in arrays, empty or ``__x__`` keys)."""
    return json.dumps([stage.model_dump(mode="json", exclude_none=True) for stage in stages])


def pipeline_from_stored(value: Any) -> Any:
    """Accept a pipeline stored by :func:`pipeline_to_json` as well as a list."""
    return json.loads(value) if isinstance(value, str) else value
