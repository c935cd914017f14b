"""The CLI's --format choices are the service's formats, no more and no fewer."""

from __future__ import annotations

from typing import get_args

from scrapejobs_client.cli.app import PageFormat
from scrapejobs_client.client import with_options
from scrapejobs_shared.extraction.spec import Format


def test_the_cli_offers_exactly_the_formats_the_service_accepts() -> None:
    assert {f.value for f in PageFormat} == set(get_args(Format))


def test_formats_and_render_are_merged_into_the_options_given() -> None:
    assert with_options(None) is None
    assert with_options({"timeout_s": 5}, formats=["markdown"]) == {
        "timeout_s": 5,
        "formats": ["markdown"],
    }
    assert with_options(None, True, ["text"]) == {"render": True, "formats": ["text"]}
