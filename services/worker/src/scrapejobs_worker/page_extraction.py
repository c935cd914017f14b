"""Turn a fetched response into a task outcome (TEMPORARY minimal extractor, replaced next)."""

from __future__ import annotations

from parsel import Selector

from scrapejobs_shared.jobspec import JobSpec
from scrapejobs_shared.records import TaskOutcome
from scrapejobs_shared.statuses import TaskStatus
from scrapejobs_worker.fetch_port import FetchResponse


def extract_outcome(response: FetchResponse, spec: JobSpec) -> TaskOutcome:
    selector = Selector(text=response.body.decode("utf-8", "replace"))
    data = {}
    for name, field in spec.extract.items():
        found = selector.css(field.css) if field.css else selector.xpath(field.xpath or "")
        values = [v.strip() for v in found.getall()]
        data[name] = values if field.all else (values[0] if values else field.default)
    return TaskOutcome(
        TaskStatus.SUCCEEDED, http_status=response.status, data=data, elapsed_ms=response.elapsed_ms
    )
