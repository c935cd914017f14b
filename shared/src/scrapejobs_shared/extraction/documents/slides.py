"""Presentations (PPTX): each slide a page, read by python-pptx: its title a heading, its text
boxes' paragraphs (indented ones as list items), its tables and charts' data as markdown
tables, its speaker notes last; pictures left out (as a web page's images are). 10 ms for a
277 KB deck, a quarter of markitdown's time (bench/README.md, "Documents")."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from typing import Any

import pptx
from pptx.exc import PackageNotFoundError

from ..document_types import PPTX
from .containers import core_properties, open_package
from .document import Document, DocumentOptions, DocumentPage, DocumentUnreadable
from .tables import markdown_table


def read_pptx(data: bytes, options: DocumentOptions) -> Document:
    metadata = core_properties(open_package(data, PPTX.label), PPTX.label)
    try:
        deck = pptx.Presentation(io.BytesIO(data))
        slides = list(deck.slides)
        pages = tuple(
            _slide(number, slide)
            for number, slide in enumerate(slides[: options.max_pages], start=1)
        )
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile, AttributeError) as exc:
        raise DocumentUnreadable(f"the {PPTX.label} file cannot be read: {exc!r}") from None
    found = metadata | {"page_count": len(slides)}
    return Document(pages, len(slides), found, options.page_markers)


def _slide(number: int, slide: Any) -> DocumentPage:
    blocks: list[str] = []
    title = slide.shapes.title
    if title is not None and title.has_text_frame and title.text_frame.text.strip():
        blocks.append("## " + " ".join(title.text_frame.text.split()))
    title_id = title.shape_id if title is not None else None
    for shape in _shapes(slide.shapes):
        if shape.shape_id == title_id:
            continue
        if getattr(shape, "has_table", False) and shape.has_table:
            blocks.append(_table(shape.table))
        elif getattr(shape, "has_chart", False) and shape.has_chart:
            blocks.append(_chart(shape.chart))
        elif shape.has_text_frame:
            blocks.extend(_paragraphs(shape.text_frame))
    if slide.has_notes_slide:
        notes = slide.notes_slide.notes_text_frame
        if notes is not None and notes.text.strip():
            blocks.append("### Notes\n\n" + "\n\n".join(_paragraphs(notes)))
    markdown = "\n\n".join(block for block in blocks if block)
    text = "\n".join(line.lstrip("#-| ") for line in markdown.splitlines() if line.strip())
    return DocumentPage(number, markdown, text)


def _shapes(shapes: Any) -> Iterator[Any]:
    """The shapes in reading order (top to bottom, then left to right), groups opened."""
    ordered = sorted(shapes, key=lambda s: (s.top or 0, s.left or 0))
    for shape in ordered:
        if shape.shape_type is not None and hasattr(shape, "shapes"):  # a group
            yield from _shapes(shape.shapes)
        else:
            yield shape


def _paragraphs(frame: Any) -> Iterator[str]:
    for paragraph in frame.paragraphs:
        text = " ".join(paragraph.text.split())
        if text:
            yield ("  " * (paragraph.level - 1) + "- " + text) if paragraph.level else text


def _chart(chart: Any) -> str:
    """A chart as its title and its data: a row a category, a column a series."""
    title = chart.chart_title.text_frame.text.strip() if chart.has_title else ""
    plot = chart.plots[0] if len(chart.plots) else None
    if plot is None:
        return f"### {title}" if title else ""
    series = list(plot.series)
    rows = [["Category", *(s.name or "" for s in series)]]
    values = [list(s.values) for s in series]
    for n, category in enumerate(plot.categories):
        rows.append([str(category), *(_number(v[n]) if n < len(v) else "" for v in values)])
    table = markdown_table(rows)
    return f"### {title}\n\n{table}" if title else table


def _number(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value)


def _table(table: Any) -> str:
    return markdown_table([[cell.text for cell in row.cells] for row in table.rows])
