"""A JSON shape of the API read from a record: ``View.of(record)`` takes each field from the
record's attribute of the same name (a field's ``validation_alias`` names another, or a
path to one; the field's own name is taken too)."""

from __future__ import annotations

from typing import Self

from pydantic import BaseModel, ConfigDict


class RecordView(BaseModel):
    model_config = ConfigDict(from_attributes=True, validate_by_name=True)

    @classmethod
    def of(cls, record: object) -> Self:
        return cls.model_validate(record)
