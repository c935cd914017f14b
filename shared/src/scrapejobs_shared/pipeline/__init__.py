"""Post-processing stages run on each result's ``data`` after extraction (pure: no I/O, no
cloud or web names). ``spec`` says what a job may ask for (validated at submit time);
``clean``, ``validate`` and ``transform`` are the stages; ``runner`` applies a pipeline;
``failure`` is how a stage refuses a result."""

from .failure import VALIDATION, PipelineFailure, StageRejected
from .runner import run_pipeline
from .spec import (
    MAX_STAGES,
    CastType,
    CleanOptions,
    Pipeline,
    Stage,
    TransformOptions,
    ValidateOptions,
    pipeline_from_stored,
    pipeline_to_json,
)

__all__ = [
    "MAX_STAGES",
    "VALIDATION",
    "CastType",
    "CleanOptions",
    "Pipeline",
    "PipelineFailure",
    "Stage",
    "StageRejected",
    "TransformOptions",
    "ValidateOptions",
    "pipeline_from_stored",
    "pipeline_to_json",
    "run_pipeline",
]
