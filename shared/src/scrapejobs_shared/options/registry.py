"""The option families of a deployment, as the models, the Firecrawl translation, the submission
rules and the worker read them (``option_family.py`` says what a family is)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, create_model, model_validator
from pydantic.alias_generators import to_camel

from .option_family import (
    FieldSpec,
    FirecrawlKind,
    NativeKind,
    NotServed,
    OptionFamily,
    ServedHere,
)
from .refused import refused_fields

Model = TypeVar("Model", bound=BaseModel)


class OptionRegistry:
    def __init__(self, families: Sequence[OptionFamily]) -> None:
        names = [family.name for family in families]
        if len(set(names)) != len(names):
            raise ValueError(f"two option families share a name: {names}")
        self.families = tuple(families)

    def __iter__(self) -> Any:
        return iter(self.families)

    def native_model(self, base: type[Model], kind: NativeKind, name: str) -> type[Model]:
        """``base`` with every family's native fields of ``kind``, named ``name``."""
        fields: dict[str, FieldSpec] = {}
        for family in self.families:
            fields |= family.native_fields.get(kind, {})
        if kind != "options":
            return _model(base, name, fields)

        def settled(options: Model) -> Model:
            for family in self.families:
                family.settle(options)
            return options

        return _model(base, name, fields, {"_settled": model_validator(mode="after")(settled)})

    def firecrawl_model(self, base: type[Model], kind: FirecrawlKind, name: str) -> type[Model]:
        """``base`` with every family's Firecrawl fields of ``kind`` and the refused options of
        that body that no family serves, named ``name``."""
        fields: dict[str, FieldSpec] = {}
        for family in self.families:
            fields |= family.firecrawl_fields.get(kind, {})
        served = frozenset(info.alias or to_camel(field) for field, (_, info) in fields.items())
        return _model(base, name, refused_fields(kind, served) | fields)

    def refused_on_uploads(self, given: BaseModel, kind: FirecrawlKind) -> str | None:
        """Why a file uploaded to be read refuses the Firecrawl body ``given`` of ``kind``: the
        first field it sets (from its default) that would change what is fetched or rendered."""
        for family in self.families:
            if family.uploads != "refused":
                continue
            for field, (_, info) in family.firecrawl_fields.get(kind, {}).items():
                if getattr(given, field, None) != info.get_default(call_default_factory=True):
                    return f"{family.on_uploads}: leave {info.alias or to_camel(field)} out"
        return None

    def options_to_native(
        self, given: BaseModel, native: dict[str, Any], here: ServedHere, upload: bool = False
    ) -> None:
        """Write into ``native`` (a job's native ``options``) what Firecrawl's scrape options
        ``given`` ask (``upload``: of a file uploaded to be read, only what reading takes)."""
        for family in self.families:
            if not upload or family.uploads == "read":
                family.options_to_native(given, native, here)

    def body_to_native(self, kind: FirecrawlKind, given: BaseModel, native: dict[str, Any]) -> None:
        for family in self.families:
            family.body_to_native(kind, given, native)

    def not_served(self, request: Any, here: ServedHere) -> NotServed | None:
        """The first thing ``request`` asks that this deployment does not serve (None: none)."""
        for family in self.families:
            if (refusal := family.served(request, here)) is not None:
                return refusal
        return None

    def fetch_headers(self, options: Any) -> dict[str, str]:
        """A page's request headers for a job's ``options``: what the families add, but those
        the job sets itself (whatever their case), then the job's own ``headers``."""
        own: dict[str, str] = dict(options.headers)
        named = {name.lower() for name in own}
        added: dict[str, str] = {}
        for family in self.families:
            added |= family.request_headers(options)
        return {k: v for k, v in added.items() if k.lower() not in named} | own

    def browser_context(self, options: Any) -> dict[str, str]:
        settings: dict[str, str] = {}
        for family in self.families:
            settings |= family.browser_context(options)
        return settings

    def keeps_result(self, request: Any) -> bool:
        return all(family.keeps_result(request) for family in self.families)

    def firecrawl_names(self) -> Mapping[str, str]:
        names: dict[str, str] = {}
        for family in self.families:
            names |= family.firecrawl_names
        return names


def _model(
    base: type[Model], name: str, fields: dict[str, FieldSpec], validators: Any = None
) -> type[Model]:
    made: type[Model] = create_model(  # type: ignore[call-overload]
        name,
        __base__=base,
        __module__=base.__module__,
        __doc__=base.__doc__,
        __validators__=validators,
        **fields,
    )
    return made
