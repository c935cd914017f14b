"""Whole-document writes of plain values, encoded straight to Firestore ``Write`` protobufs:
the one module that uses the Firestore client library's private names.

Why: the library's ``WriteBatch.set`` builds every write through proto-plus wrappers, one per
value, and the worker writes one result document per page; building the same bytes here
takes about a third of the instructions, some 6% of the worker's per page (bench/README.md,
"Library internals"). The dispatcher creates a one-URL job's document the same way: the
library's ``create`` of it was a fifth of the dispatcher's CPU per submission (py-spy), and
the worker claims and settles it with plain updates (the library's ``update`` of it was an
eighth of the worker's CPU in workload C).

Only plain values are encoded: ``None``, ``bool``, ``int``, ``float``,
``str``, ``bytes``, datetimes, lists and tuples of them and maps with string keys; anything
else (sentinels such as ``SERVER_TIMESTAMP``, references, geo points) raises ``TypeError``;
use the library's ``set`` for those.

What it relies on (google-cloud-firestore pinned below its next minor release in
shared/pyproject.toml; tests/unit/core/test_firestore_plain_writes.py fails on an upgrade):

* ``WriteBatch._add_write_pbs`` / ``Transaction._add_write_pbs``: the library's own entry point
  for its ``set``, ``create``, ``update`` and ``delete``, so commits, retries and transactions
  stay the library's;
* ``DocumentReference._document_path``: a document's full resource name;
* that each write here is byte for byte what ``set`` (or ``create``) would send (the tests
  compare them).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from google.cloud.firestore_v1.types import common as common_types
from google.cloud.firestore_v1.types import document as document_types
from google.cloud.firestore_v1.types import write as write_types
from google.protobuf import struct_pb2, timestamp_pb2
from proto.datetime_helpers import DatetimeWithNanoseconds as ProtoDatetimeWithNanoseconds  # type: ignore[import-untyped]

_Write = write_types.Write.pb()
_Document = document_types.Document.pb()
_Value = document_types.Value.pb()
_ArrayValue = document_types.ArrayValue.pb()
_MapValue = document_types.MapValue.pb()
_Precondition = common_types.Precondition.pb()
_DocumentMask = common_types.DocumentMask.pb()
_MISSING = _Precondition(exists=False)
_SIMPLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # a field name the API takes unquoted


def name_of(reference: Any) -> str:
    """The resource name of a document reference."""
    return str(reference._document_path)


def document_name(parent: Any, collection: str, document_id: str) -> str:
    """The resource name of ``parent``'s (a document reference) ``collection/document_id``,
    without building a reference for it. Ids are the store's own (no ``/``)."""
    return f"{parent._document_path}/{collection}/{document_id}"


def set_write(name: str, data: Mapping[str, Any]) -> Any:
    """A write that replaces document ``name`` with ``data`` (what ``set`` without merge
    sends)."""
    return _Write(update=_Document(name=name, fields=_fields(data)))


def create_write(name: str, data: Mapping[str, Any]) -> Any:
    """A write that creates document ``name`` with ``data``, failing the commit when it exists
    (what ``create`` sends)."""
    return _Write(update=_Document(name=name, fields=_fields(data)), current_document=_MISSING)


def update_write(name: str, updates: Mapping[str, Any], last_update_time: Any = None) -> Any:
    """A write of the fields ``updates`` names (field names, or dotted paths of simple names)
    of document ``name``, guarded by ``last_update_time`` (the library's
    ``write_option(last_update_time=...)``) or else by the document's existence: what
    ``update`` sends. A sentinel value (an ``Increment``) raises ``TypeError``: its transform
    is the library's to build."""
    nested: dict[str, Any] = {}
    paths = []
    for path, value in updates.items():
        parts = path.split(".")
        if not all(_SIMPLE.fullmatch(part) for part in parts):
            raise ValueError(f"not a path of simple field names: {path!r}")
        *parents, leaf = parts
        target = nested
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = value
        paths.append(tuple(parts))
    mask = _DocumentMask(field_paths=[".".join(parts) for parts in sorted(paths)])
    guard = (
        _Precondition(exists=True)
        if last_update_time is None
        else _Precondition(update_time=_guard_timestamp(last_update_time))
    )
    document = _Document(name=name, fields=_fields(nested))
    return _Write(update=document, update_mask=mask, current_document=guard)


def stage_update(
    target: Any, client: Any, reference: Any, updates: Mapping[str, Any], last_update_time: Any
) -> None:
    """Stage ``update_write`` in ``target``, or, for updates holding a sentinel, the
    library's ``update`` (guarded the same way)."""
    try:
        write = update_write(name_of(reference), updates, last_update_time)
    except TypeError:
        option = (
            None
            if last_update_time is None
            else client.write_option(last_update_time=last_update_time)
        )
        target.update(reference, updates, option=option)
    else:
        stage(target, [write])


def stage(target: Any, writes: Iterable[Any]) -> None:
    """Add ``writes`` to a library ``WriteBatch`` or ``Transaction``, in order."""
    target._add_write_pbs(list(writes))


def _fields(data: Mapping[str, Any]) -> dict[str, Any]:
    fields = {key: _value(item) for key, item in data.items()}
    if "" in fields:
        raise ValueError("empty field name: Firestore refuses it")
    return fields


def _value(value: Any) -> Any:
    kind = type(value)
    if kind is str:
        return _Value(string_value=value)
    if value is None:
        return _Value(null_value=struct_pb2.NULL_VALUE)
    if kind is bool:
        return _Value(boolean_value=value)
    if kind is int:
        return _Value(integer_value=value)
    if kind is float:
        return _Value(double_value=value)
    if isinstance(value, datetime):
        return _Value(timestamp_value=_timestamp(value))
    if kind is bytes:
        return _Value(bytes_value=value)
    if kind is list or kind is tuple:
        return _Value(array_value=_ArrayValue(values=[_value(item) for item in value]))
    if kind is dict:
        return _Value(map_value=_MapValue(fields=_fields(value)))
    return _subclass_value(value)


def _subclass_value(value: Any) -> Any:
    """Subclasses of the plain types (a StrEnum, an IntEnum), as the library's isinstance
    checks take them; the exact types above are the hot path."""
    if isinstance(value, str):
        return _Value(string_value=value)
    if isinstance(value, bool):
        return _Value(boolean_value=value)
    if isinstance(value, int):
        return _Value(integer_value=value)
    if isinstance(value, float):
        return _Value(double_value=value)
    raise TypeError(f"not a plain Firestore value: {type(value).__name__}")


def _guard_timestamp(moment: datetime) -> Any:
    """As the library sends a write option's time (proto-plus's marshal): to the nanosecond
    for proto-plus's own ``DatetimeWithNanoseconds`` (what the client answers as update
    times), to the microsecond for any other datetime. A guard must be the stored update time
    exactly: one off by its nanoseconds fails every time."""
    if isinstance(moment, ProtoDatetimeWithNanoseconds):
        return moment.timestamp_pb()
    plain = datetime(*moment.timetuple()[:6], moment.microsecond, tzinfo=moment.tzinfo)
    return _timestamp(plain)


def _timestamp(moment: datetime) -> Any:
    precise = getattr(moment, "timestamp_pb", None)  # DatetimeWithNanoseconds keeps nanos
    if precise is not None:
        return precise()
    # as the library does: a naive datetime is UTC
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    aware = aware.astimezone(UTC)
    micros = calendar.timegm(aware.timetuple()) * 1_000_000 + aware.microsecond
    seconds, micros = divmod(micros, 1_000_000)
    return timestamp_pb2.Timestamp(seconds=seconds, nanos=micros * 1000)
