"""Every regular expression a job request holds, with the field it is in: its extraction
fields' ``re`` (nested items too), its crawl's ``include`` and ``exclude``, and the ``pattern``
and ``patternProperties`` of its pipeline's JSON Schemas (``validate`` and ``ai`` stages).
What a submission's pattern budget counts and compiles (user_regex.py). The patterns an XPath
builds as it runs (EXSLT ``re:``) are compiled where pages are extracted, within the same
budget."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import NamedTuple

from scrapejobs_shared.domain.jobspec import JobRequest, JobSpec
from scrapejobs_shared.extraction.spec import FieldSpec
from scrapejobs_shared.pipeline.spec import AiOptions, ValidateOptions
from scrapejobs_shared.pipeline.validate import schema_patterns


class JobPattern(NamedTuple):
    field: str  # where the request holds it, as a 422 names a field
    pattern: str


def patterns_of(request: JobRequest | JobSpec) -> list[JobPattern]:
    """What a request holds (or a stored job, as a retry runs it again)."""
    return list(_all(request))


def _all(request: JobRequest | JobSpec) -> Iterator[JobPattern]:
    yield from _fields(request.extract, "extract")
    if request.crawl is not None:
        for side in ("include", "exclude"):
            for index, pattern in enumerate(getattr(request.crawl, side)):
                yield JobPattern(f"crawl.{side}[{index}]", pattern)
    for index, stage in enumerate(request.pipeline):
        options = stage.options
        if isinstance(options, ValidateOptions | AiOptions):
            at = f"pipeline[{index}].{stage.name}.schema"
            for where, pattern in schema_patterns(options.json_schema, ""):
                yield JobPattern(f"{at}{where}", pattern)


def _fields(fields: Mapping[str, FieldSpec] | None, at: str) -> Iterator[JobPattern]:
    for name, spec in (fields or {}).items():
        if spec.re is not None:
            yield JobPattern(f"{at}.{name}.re", spec.re)
        yield from _fields(spec.items, f"{at}.{name}.items")
