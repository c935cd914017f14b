"""A job's results as JSON Lines or CSV, written page by page as the store is read.

Memory stays bounded by one page of results (``service.EXPORT_PAGE``), whatever the job's
size: each page is rendered and handed on before the next is read.

**JSONL**: one result per line, exactly the object ``GET /v1/jobs/{id}/results`` returns.

**CSV** (RFC 4180, UTF-8, a header row): one row per result.

* The result's own fields first (:data:`RESULT_COLUMNS`: ``id, url, status, http_status,
  error, attempts, fetched_at, elapsed_ms, rendered, rendered_ms, replays, tls_unverified,
  truncated_fields, field_errors``).
* Then ``data`` flattened into ``data.``-prefixed columns, nested objects with dotted keys
  (``data.metadata.title``); a list, or an empty object, stays one cell. A CSV header comes
  before any row, so the data columns are fixed up front: the job's extract field names and
  formats (unless its pipeline has a ``transform`` stage, which may rename them), then every
  path found in the first page of results, in order of appearance. A column's value is one
  cell even when it is an object.
* Last, ``other_data``: a JSON object holding whatever of a later result's data has no column
  (path → value; empty when there is none), so nothing is dropped.

Cells: null → empty; strings as they are, except that one a spreadsheet would read as a
formula (it begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) gets a leading
``'`` (OWASP's CSV injection rule: a page titled ``=HYPERLINK(...)`` stays text);
``true``/``false``; numbers, lists and objects as compact JSON.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterator, Iterable
from typing import Any, Literal

from scrapejobs_dispatcher.jobs.views import TaskResult
from scrapejobs_shared.domain.records import JobRecord, TaskRecord
from scrapejobs_shared.extraction.formats import format_name

ExportFormat = Literal["jsonl", "csv"]
MEDIA_TYPES: dict[str, str] = {"jsonl": "application/x-ndjson", "csv": "text/csv"}
RESULT_COLUMNS = tuple(name for name in TaskResult.model_fields if name != "data")
OTHER_DATA = "other_data"
DATA = "data"


def filename(job_id: str, export_format: ExportFormat) -> str:
    return f"job-{job_id}-results.{export_format}"


async def jsonl_chunks(pages: AsyncIterator[list[TaskRecord]]) -> AsyncIterator[bytes]:
    async for page in pages:
        yield b"".join(TaskResult.of(task).model_dump_json().encode() + b"\n" for task in page)


async def csv_chunks(
    job: JobRecord, pages: AsyncIterator[list[TaskRecord]]
) -> AsyncIterator[bytes]:
    """The header once the first page is read, then a chunk of rows per page."""
    columns: list[str] | None = None
    async for page in pages:
        results = [TaskResult.of(task).model_dump(mode="json") for task in page]
        if columns is None:
            columns = csv_columns(job, results)
            yield _csv_text([columns])
        yield _csv_text(csv_row(result, columns) for result in results)
    if columns is None:  # no result yet: the header alone
        yield _csv_text([csv_columns(job, [])])


def csv_columns(job: JobRecord, first_results: Iterable[dict[str, Any]]) -> list[str]:
    """The header: the result's fields, the data columns, ``other_data``."""
    data_columns: dict[str, None] = {}  # ordered set
    if not any(stage.name == "transform" for stage in job.spec.pipeline):
        names = [*job.spec.extract, *map(format_name, job.spec.options.formats)]
        data_columns.update((f"{DATA}.{name}", None) for name in names if name != "metadata")
    for result in first_results:
        data_columns.update((path, None) for path in flatten_data(result.get(DATA), ()))
    return [*RESULT_COLUMNS, *data_columns, OTHER_DATA]


def csv_row(result: dict[str, Any], columns: list[str]) -> list[str]:
    """One result (as the results API returns it) as cells under ``columns``."""
    data_columns = [name for name in columns if name.startswith(f"{DATA}.")]
    others = flatten_data(result.get(DATA), data_columns)
    values = {name: others.pop(name, None) for name in data_columns}
    values[OTHER_DATA] = others or None
    return [cell(values[name] if name in values else result.get(name)) for name in columns]


def flatten_data(data: Any, columns: Iterable[str]) -> dict[str, Any]:
    """``data`` as ``data.``-prefixed dotted paths → values; an object whose path is one of
    ``columns`` (or is empty) is not descended into."""
    leaves: dict[str, Any] = {}
    if isinstance(data, dict):
        stop = set(columns)
        for key, value in data.items():
            _flatten(value, f"{DATA}.{key}", stop, leaves)
    return leaves


def _flatten(value: Any, path: str, stop: set[str], leaves: dict[str, Any]) -> None:
    if isinstance(value, dict) and value and path not in stop:
        for key, item in value.items():
            _flatten(item, f"{path}.{key}", stop, leaves)
    else:
        leaves[path] = value


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return "'" + value if value.startswith(FORMULA_STARTS) else value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _csv_text(rows: Iterable[list[str]]) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows(rows)
    return buffer.getvalue().encode()
