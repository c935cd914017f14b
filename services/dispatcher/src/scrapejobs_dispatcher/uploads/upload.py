"""An uploaded file, what it is, and the errors of uploads."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import quote

from scrapejobs_shared.errors import InvalidInput, ScrapejobsError
from scrapejobs_shared.extraction.document_types import BY_EXTENSION, DOCUMENT_TYPES

# where an upload's result says it came from: a name under a domain that never resolves
# (RFC 2606's .invalid), so that no fetch of it can ever reach anything
UPLOAD_HOST = "upload.invalid"
HTML_EXTENSIONS = (".html", ".htm")
MAX_FILENAME = 255


@dataclass(frozen=True, slots=True)
class Upload:
    filename: str
    content_type: str | None  # as the upload declared it
    data: bytes

    @property
    def url(self) -> str:
        return f"https://{UPLOAD_HOST}/{quote(self.filename)}"

    def media_type(self) -> str | None:
        """The declared type, else the one its extension names (the content decides anyway
        for a document: extraction/content_kind.py)."""
        declared = (self.content_type or "").split(";")[0].strip().lower()
        if declared and declared not in ("application/octet-stream", "binary/octet-stream"):
            return self.content_type
        suffix = PurePosixPath(self.filename.lower()).suffix
        if suffix in HTML_EXTENSIONS:
            return "text/html"
        kind = BY_EXTENSION.get(suffix)
        return kind.media_type if kind is not None else self.content_type


def accepted_extensions() -> tuple[str, ...]:
    """The extensions of the files an upload may be: the documents read, and HTML."""
    documents = (e for kind in DOCUMENT_TYPES if kind.readable for e in kind.extensions)
    return (*documents, *HTML_EXTENSIONS)


def clean_filename(raw: str | None) -> str:
    """The upload's name as given (its last path part), or ``upload``."""
    name = PurePosixPath((raw or "").replace("\\", "/")).name.strip()
    if len(name) > MAX_FILENAME:
        raise InvalidInput(f"the file's name is longer than {MAX_FILENAME} characters", "file")
    return name or "upload"


class UploadTooLarge(ScrapejobsError):
    status = 413
    code = "payload_too_large"

    field = "file"

    def __init__(self, size: int | None, limit: int) -> None:
        said = f" ({size:,} bytes)" if size is not None else ""
        super().__init__(
            f"the file{said} is larger than {limit:,} bytes (SCRAPEJOBS_MAX_UPLOAD_BYTES)"
        )
