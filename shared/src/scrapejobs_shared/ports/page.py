"""A page of a listing, and the token of the next (None: the last page); the request for one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class PageRequest:
    """Which page of a listing to read: at most ``size`` items, from where the page that
    answered ``token`` ended (None: the first page)."""

    size: int
    token: str | None = None


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    items: list[T]
    next_page_token: str | None
