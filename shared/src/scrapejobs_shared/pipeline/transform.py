"""The ``transform`` stage: rename, default and cast top-level fields (in that order; see
:class:`~scrapejobs_shared.pipeline.spec.TransformOptions`).

Casts (null is left as it is; a list is cast item by item; anything else that does not fit is a
problem reported at its JSON path, and the stage rejects the data):

============  ==============================================================================
``int``       integers; floats with no fractional part; ``true``/``false`` → 1/0; strings
              holding an integer or a whole float (surrounding whitespace ignored)
``float``     numbers; ``true``/``false`` → 1.0/0.0; strings holding a finite number
``bool``      booleans; the numbers 0 and 1; strings ``true/false``, ``yes/no``, ``on/off``,
              ``1/0`` (any case, whitespace ignored)
``str``       strings; ``true``/``false``; numbers as JSON writes them; objects as JSON text
============  ==============================================================================
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from scrapejobs_shared.errors import WorkFailed
from scrapejobs_shared.pipeline.failure import StageRejected
from scrapejobs_shared.pipeline.spec import CastType, TransformOptions

_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})


class _CastError(WorkFailed, ValueError):
    pass


def transform(data: dict[str, Any], options: TransformOptions) -> dict[str, Any]:
    """A transformed copy of ``data``; raises :class:`StageRejected` when a cast fails."""
    result = _renamed(data, options.rename)
    for name, default in options.defaults.items():
        if result.get(name) is None:
            result[name] = default
    problems: dict[str, str] = {}
    for name, kind in options.cast.items():
        if name in result:
            result[name] = _cast_at(result[name], kind, f"$.{name}", problems)
    if problems:
        raise StageRejected(problems)
    return result


def _renamed(data: dict[str, Any], rename: dict[str, str]) -> dict[str, Any]:
    """Every rename at once, in the data's order; a renamed value wins over a field that
    already had its new name."""
    taken = {new for old, new in rename.items() if old in data}
    result: dict[str, Any] = {}
    for name, value in data.items():
        if name in rename:
            result[rename[name]] = value
        elif name not in taken:
            result[name] = value
    return result


def _cast_at(value: Any, kind: CastType, path: str, problems: dict[str, str]) -> Any:
    if isinstance(value, list):
        return [_cast_at(item, kind, f"{path}[{i}]", problems) for i, item in enumerate(value)]
    if value is None:
        return None
    try:
        return _CASTS[kind](value)
    except _CastError as exc:
        problems[path] = f"cannot cast {_shown(value)} to {kind}: {exc}"
        return value


def _to_int(value: Any) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not value.is_integer():
            raise _CastError("not a whole number")
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return _to_int(_to_float(value))
    raise _CastError("not a number or a string")


def _to_float(value: Any) -> float:
    if isinstance(value, bool | int | float):
        try:
            number = float(value)
        except OverflowError:
            raise _CastError("too large") from None
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise _CastError("not a number") from None
    else:
        raise _CastError("not a number or a string")
    if not math.isfinite(number):
        raise _CastError("not a finite number")
    return number


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
    raise _CastError("not a boolean, 0/1, true/false, yes/no or on/off")


def _to_str(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_CASTS: dict[str, Callable[[Any], Any]] = {
    "int": _to_int,
    "float": _to_float,
    "bool": _to_bool,
    "str": _to_str,
}


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:59] + "…"
