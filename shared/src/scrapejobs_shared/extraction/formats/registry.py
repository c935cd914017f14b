"""The table of formats: each by its native and its Firecrawl name, and the type a request's
``formats`` list is validated (and documented in the OpenAPI document) with."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Annotated, Any, Literal, Union, get_args

from pydantic import Discriminator, Tag

from scrapejobs_shared.errors import InvalidInput

from .page_format import FormatOptions, PageFormat

NAME, OTHER = "name", "object"  # the tags of a name, and of an object of no known type
FormatChoice = str | FormatOptions  # a format's name, or its object form with its options


def items_any_of(schema: dict[str, Any]) -> None:
    """A format list's schema with its items' ``oneOf`` as ``anyOf`` (a ``json_schema_extra``):
    a name or an object, which the validator tells apart by ``type`` (the OpenAPI document's
    readers, and its fuzzers, take ``anyOf`` as the list of what is accepted)."""
    items = schema.get("items")
    if isinstance(items, dict) and "oneOf" in items:
        items["anyOf"] = items.pop("oneOf")


def format_name(choice: FormatChoice) -> str:
    return choice if isinstance(choice, str) else choice.type


class UnknownFormat(InvalidInput):
    """A format the registry does not list (a request model lets none through)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown format {name!r}", "options.formats")


class FormatRegistry:
    def __init__(self, *formats: PageFormat) -> None:
        self._formats = {page_format.name: page_format for page_format in formats}
        self._firecrawl = {f.firecrawl: f for f in formats if f.firecrawl is not None}

    def __iter__(self) -> Iterator[PageFormat]:
        return iter(self._formats.values())

    def __getitem__(self, name: str) -> PageFormat:
        try:
            return self._formats[name]
        except KeyError:
            raise UnknownFormat(name) from None

    def named(self) -> tuple[str, ...]:
        """The formats asked for by name alone (those taking no options, or taking them with
        defaults for all)."""
        return tuple(n for n, f in self._formats.items() if f.options is None or f.by_name)

    def firecrawl(self, name: str) -> PageFormat | None:
        """The format Firecrawl calls ``name``, if there is one."""
        return self._firecrawl.get(name)

    def firecrawl_named(self) -> tuple[str, ...]:
        """Firecrawl's names of the formats asked for by name alone."""
        return tuple(n for n, f in self._firecrawl.items() if f.options is None or f.by_name)

    def option_models(self) -> tuple[type[FormatOptions], ...]:
        return tuple(f.options for f in self if f.options is not None)

    def choice_type(self, names: Iterable[str] | None = None, also: tuple[Any, ...] = ()) -> Any:
        """A pydantic type accepting a name of ``names`` (default: :meth:`named`), the object
        form of a format taking options, or one of the models ``also``: the value's ``type``
        chooses the model, so an error is that model's (``also``'s last is the fallback when
        it has no ``type`` of its own: Firecrawl's name in an object; a model of ``also`` whose
        ``type`` a format's options have replaces them: Firecrawl's shape of a format)."""
        name = Literal.__getitem__(tuple(names or self.named()))
        members: list[Any] = [Annotated[name, Tag(NAME)]]
        tags: dict[str, str] = {}
        models: dict[str, Any] = {}  # by tag: a model of ``also`` replaces the registry's
        for model in (*self.option_models(), *also):
            kinds = get_args(model.model_fields["type"].annotation)
            for kind in kinds:
                tags[kind] = kinds[0]
            models[kinds[0] if kinds else OTHER] = model
        members += [Annotated[model, Tag(tag)] for tag, model in models.items()]

        def tag(value: Any) -> str | None:
            if isinstance(value, str):
                return NAME
            kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
            return tags.get(kind, OTHER) if isinstance(kind, str) else None

        return Annotated[
            Union.__getitem__(tuple(members)),
            Discriminator(
                tag,
                custom_error_type="invalid_format",
                custom_error_message="a format's name, or an object whose 'type' names it",
            ),
        ]

    def stages(self, choices: Iterable[FormatChoice]) -> list[PageFormat]:
        """The formats of ``choices`` that a stage answers."""
        return [found for found in self._of(choices) if found.stage is not None]

    def browser_made(self, choices: Iterable[FormatChoice]) -> list[PageFormat]:
        """The formats of ``choices`` the browser makes (a job asking for one renders, and its
        pages are this job's own visit: never reused from the page cache)."""
        return [found for found in self._of(choices) if found.needs_browser]

    def keeping_files(self, choices: Iterable[FormatChoice]) -> list[PageFormat]:
        """The formats of ``choices`` whose answer is a file kept in the file store."""
        return [found for found in self._of(choices) if found.keeps_file]

    def _of(self, choices: Iterable[FormatChoice]) -> Iterator[PageFormat]:
        return (self[format_name(choice)] for choice in choices)
