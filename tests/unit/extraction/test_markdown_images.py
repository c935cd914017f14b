"""The markdown's images: left out unless asked for; ``linked`` keeps them as ``![alt](url)``,
an image written into the page (a ``data:`` URI) as Firecrawl's placeholder; ``all`` keeps
those whole too. Asked through the markdown format's object form."""

from __future__ import annotations

import pytest

from scrapejobs_shared.domain.jobspec import JobOptions
from scrapejobs_shared.extraction.markdown import (
    BASE64_REMOVED,
    page_markdown,
    placeholders_for_written_in,
)

PNG = "data:image/png;base64,iVBORw0KGgo="
HTML = (
    "<article><h1>Pictures</h1><p>Text.</p>"
    f'<img alt="dot" src="{PNG}"><img alt="chart" src="/chart.png"><img src="{PNG}"></article>'
)


def test_images_are_left_out_unless_asked_for() -> None:
    markdown = page_markdown(HTML, "https://e.example/")
    assert "![" not in markdown and "data:" not in markdown


def test_linked_images_keep_their_urls_and_a_placeholder_for_those_written_in() -> None:
    markdown = page_markdown(HTML, "https://e.example/", "linked")
    assert "![chart](https://e.example/chart.png)" in markdown
    assert f"![dot]({BASE64_REMOVED})" in markdown and f"![]({BASE64_REMOVED})" in markdown
    assert "data:" not in markdown


def test_only_images_written_in_take_the_placeholder() -> None:
    given = "a [link](data:text/plain,x) ![x](data:a) ![y](data:b ![z](https://e/z.png) ![w]("
    assert placeholders_for_written_in(given) == (
        f"a [link](data:text/plain,x) ![x]({BASE64_REMOVED}) ![y](data:b "
        "![z](https://e/z.png) ![w]("
    )
    lines = "![a\n](data:x) ![b](data:y)\n"
    assert placeholders_for_written_in(lines) == f"![a\n](data:x) ![b]({BASE64_REMOVED})\n"


@pytest.mark.parametrize(
    "hostile",
    ["![" * 500_000, "](data:" * 300_000, "![a" + "](data:" * 300_000, "![" + "]" * 500_000],
    ids=["openers", "targets", "one opener, many targets", "closers"],
)
def test_a_hostile_line_is_read_once(hostile: str) -> None:
    """Each of these took a scan from every start (minutes: past the suite's timeout) before:
    a line of many ``![`` without ``]``, many ``](data:`` without ``)``."""
    assert placeholders_for_written_in(hostile) == hostile


def test_all_images_keep_those_written_in_whole() -> None:
    markdown = page_markdown(HTML, "https://e.example/", "all")
    assert f"![dot]({PNG})" in markdown and "![chart](https://e.example/chart.png)" in markdown


def test_the_markdown_format_takes_its_images_as_an_object_and_by_name_still() -> None:
    options = JobOptions.model_validate(
        {"formats": ["links", {"type": "markdown", "images": "linked"}]}
    )
    assert options.formats[1].images == "linked"  # type: ignore[union-attr]
    assert JobOptions.model_validate({"formats": ["markdown"]}).formats == ["markdown"]
    with pytest.raises(ValueError, match="images"):
        JobOptions.model_validate({"formats": [{"type": "markdown", "images": "some"}]})
