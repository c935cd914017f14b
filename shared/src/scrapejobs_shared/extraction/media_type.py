"""The Content-Type header, parsed into a media type essence and its parameters."""

from __future__ import annotations

from dataclasses import dataclass, field

_TOKEN_CHARS = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz")


@dataclass(frozen=True, slots=True)
class MediaType:
    """A parsed Content-Type: ``essence`` is ``type/subtype`` lower-cased, ``""`` when absent.

    Parsing never fails: a malformed or missing header gives an empty essence.
    """

    essence: str = ""
    parameters: dict[str, str] = field(default_factory=dict)

    @property
    def type(self) -> str:
        return self.essence.partition("/")[0]

    @property
    def subtype(self) -> str:
        return self.essence.partition("/")[2]

    @property
    def charset(self) -> str | None:
        return self.parameters.get("charset")

    @classmethod
    def parse(cls, header: str | None) -> MediaType:
        """Parse a Content-Type header value (lenient, after WHATWG "extract a MIME type").

        Repeated headers joined with commas use the last valid media type; its charset is
        inherited from an earlier one of the same essence when it gives none.
        """
        if not header:
            return cls()
        parsed = cls()
        for value in _split_outside_quotes(header, ","):
            candidate = _parse_one(value)
            if not candidate.essence:
                continue
            if candidate.charset is None and parsed.charset and parsed.essence == candidate.essence:
                candidate = cls(
                    candidate.essence, {**candidate.parameters, "charset": parsed.charset}
                )
            parsed = candidate
        return parsed


def _parse_one(value: str) -> MediaType:
    head, *params = _split_outside_quotes(value, ";")
    essence = head.strip().lower()
    kind, slash, subtype = essence.partition("/")
    if not slash or not _is_token(kind) or not _is_token(subtype):
        return MediaType()
    parameters: dict[str, str] = {}
    for param in params:
        name, equals, raw = param.partition("=")
        name = name.strip().lower()
        if not equals or not _is_token(name) or name in parameters:
            continue
        parameters[name] = _unquote(raw.strip())
    return MediaType(essence, parameters)


def _is_token(text: str) -> bool:
    return bool(text) and all(char in _TOKEN_CHARS for char in text)


def _unquote(raw: str) -> str:
    if len(raw) >= 2 and raw[0] == '"':
        end = raw.find('"', 1)
        inner = raw[1:end] if end != -1 else raw[1:]
        return inner.replace("\\", "")
    return raw


def _split_outside_quotes(text: str, separator: str) -> list[str]:
    if '"' not in text:
        return text.split(separator)
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    for char in text:
        if char == '"':
            quoted = not quoted
        if char == separator and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts
