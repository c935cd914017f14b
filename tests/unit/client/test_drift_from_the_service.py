"""What the client and CLI list must be what the service accepts: formats, task statuses."""

from __future__ import annotations

import pytest

from scrapejobs_client.cli.job_commands import PageFormat
from scrapejobs_client.request_bodies import with_options
from scrapejobs_shared.domain.jobspec import JobOptions
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


def test_actions_go_into_the_render_options_and_validate_as_the_service_takes_them() -> None:
    click = {"type": "click", "selector": "#more"}
    assert with_options(None, actions=[click]) == {"render": {"actions": [click]}}
    assert with_options(None, "auto", actions=[click]) == {
        "render": {"when": "auto", "actions": [click]}
    }
    waited = with_options({"timeout_s": 9}, {"wait_ms": 50}, actions=[click])
    assert waited == {"timeout_s": 9, "render": {"wait_ms": 50, "actions": [click]}}
    JobOptions.model_validate(waited)  # what the service accepts
    with pytest.raises(ValueError, match="render=False"):
        with_options(None, False, actions=[click])


def test_the_client_knows_every_task_status_and_which_are_open() -> None:
    from scrapejobs_client.models import OPEN_TASK_STATUSES, TASK_STATUSES
    from scrapejobs_shared.domain.statuses import OPEN_TASK_STATUSES as SERVICE_OPEN
    from scrapejobs_shared.domain.statuses import TaskStatus

    assert tuple(s.value for s in TaskStatus) == TASK_STATUSES
    assert tuple(s.value for s in SERVICE_OPEN) == OPEN_TASK_STATUSES
