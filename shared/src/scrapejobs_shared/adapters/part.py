"""A call of a store answered by one of its parts: ``claim_batch = Part("_batches",
MemoryBatchStore.claim_batch)`` hands ``store.claim_batch(...)`` to ``store._batches`` with the
method's own signature (checked by mypy). A class attribute, so a subclass overrides it and
reaches it through ``super()`` like any method."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, Self, TypeVar, overload

P = ParamSpec("P")
R = TypeVar("R")


class Part(Generic[P, R]):
    def __init__(self, holder: str, method: Callable[Concatenate[Any, P], R]) -> None:
        self._holder = holder
        self._name = method.__name__

    @overload
    def __get__(self, instance: None, owner: type) -> Self: ...

    @overload
    def __get__(self, instance: object, owner: type) -> Callable[P, R]: ...

    def __get__(self, instance: object, owner: type) -> Any:
        if instance is None:
            return self
        return getattr(getattr(instance, self._holder), self._name)
