"""Apply a job's pipeline to one result's ``data``: each stage in order, each on what the one
before it returned. The first stage that refuses the data stops the pipeline with a
:class:`~scrapejobs_shared.pipeline.failure.PipelineFailure` (permanent: reason
``validation``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scrapejobs_shared.pipeline.clean import clean
from scrapejobs_shared.pipeline.failure import PipelineFailure, StageRejected
from scrapejobs_shared.pipeline.spec import AiOptions, CleanOptions, Stage, ValidateOptions
from scrapejobs_shared.pipeline.transform import transform
from scrapejobs_shared.pipeline.validate import validate


def run_pipeline(stages: Sequence[Stage], data: dict[str, Any]) -> dict[str, Any]:
    """The data after every stage; ``data`` itself is never modified."""
    for index, stage in enumerate(stages):
        try:
            data = _apply(stage, data)
        except StageRejected as exc:
            raise PipelineFailure(index, stage.name, exc.problems, data) from None
    return data


def _apply(stage: Stage, data: dict[str, Any]) -> dict[str, Any]:
    options = stage.options
    if isinstance(options, CleanOptions):
        return clean(data, options)
    if isinstance(options, ValidateOptions):
        validate(options.json_schema, data)
        return data
    if isinstance(options, AiOptions):  # the caller runs it, on the processing lane
        raise ValueError("the 'ai' stage is not run here: run the stages around it")
    return transform(data, options)
