"""What the client and CLI list must be what the service accepts: formats, task statuses."""

from __future__ import annotations

from scrapejobs_client.cli.job_commands import PageFormat
from scrapejobs_client.request_bodies import with_options
from scrapejobs_shared.extraction.formats import FORMATS


def test_the_cli_offers_exactly_the_formats_the_service_accepts_by_name() -> None:
    assert {f.value for f in PageFormat} == set(FORMATS.named())


def test_formats_and_render_are_merged_into_the_options_given() -> None:
    assert with_options(None) is None
    assert with_options({"timeout_s": 5}, formats=["markdown"]) == {
        "timeout_s": 5,
        "formats": ["markdown"],
    }
    assert with_options(None, True, ["text"]) == {"render": True, "formats": ["text"]}


def test_the_client_knows_every_task_status_and_which_are_open() -> None:
    from scrapejobs_client.models import OPEN_TASK_STATUSES, TASK_STATUSES
    from scrapejobs_shared.domain.statuses import OPEN_TASK_STATUSES as SERVICE_OPEN
    from scrapejobs_shared.domain.statuses import TaskStatus

    assert tuple(s.value for s in TaskStatus) == TASK_STATUSES
    assert tuple(s.value for s in SERVICE_OPEN) == OPEN_TASK_STATUSES
