"""A fact a reader needs beside a page's content (a product's price, a job's salary), and how to
tell that the content shows it already."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Shown(enum.Enum):
    """How to tell that a page's content shows a fact already."""

    VALUE = "value"  # its value, as written (a SKU, a stock level)
    NUMBERS = "numbers"  # every number in it (a price, a salary, a date, however formatted)
    PLACE = "place"  # its first part (a place's name or town)


@dataclass(frozen=True, slots=True)
class Fact:
    """One fact a reader needs: ``label`` (``"Price"``) and its ``value`` as text."""

    label: str
    value: str
    shown: Shown = Shown.VALUE
