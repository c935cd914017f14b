"""Text read off a page's image: Tesseract's LSTM engine through tesserocr (its C++ API in the
process, the engine loaded once a process), Debian's language packs (``tesseract-ocr-eng``...).

Chosen by measuring (bench/README.md, "OCR"): on made scans of known text (200 dpi, a slight
skew, noise), Tesseract read words at F1 0.999 in 0.83 s of CPU a page where RapidOCR (ONNX,
its models in its wheel) read 0.897 in 8.1 s.

Tesseract's layout analysis finds the page's blocks (columns) and paragraphs in reading order;
each line comes with its height, so a headline reads as a heading (page_lines.py). A page is
read within its own CPU budget (:class:`OcrLimits`, held by the kernel in a budgeted process:
processes/limits.py), on one thread (``OMP_THREAD_LIMIT``). An image larger than
:attr:`OcrLimits.max_pixels` is refused from its header, before it is decoded (images.py); a
PDF page is rasterised below it (pdf.py).
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from scrapejobs_shared.processes.limits import extend_cpu

from .document import DocumentUnreadable
from .page_lines import HYPHEN, Line

if TYPE_CHECKING:
    from PIL.Image import Image

os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # before Tesseract loads: a page, a thread

OcrMode = Literal["fast", "auto", "ocr"]
DEFAULT_DPI = 200  # a PDF page rasterised for OCR: Tesseract reads 10-12 pt text well at it
MAX_DPI = 300
DEFAULT_LANGUAGES = ("eng",)
# where Tesseract's language packs are (TESSDATA_PREFIX first): Debian's, then others'
TESSDATA_PLACES = (
    "/usr/share/tesseract-ocr/5/tessdata",
    "/usr/share/tesseract-ocr/4.00/tessdata",
    "/usr/share/tessdata",
    "/usr/local/share/tessdata",
    "/opt/homebrew/share/tessdata",
)
LANGUAGE_PATTERN = r"^[a-z]{3}(_[a-z]{2,8})?$"  # Tesseract's names: eng, deu, chi_sim
# BCP 47 languages (location.languages) as Tesseract names them: the common language packs
TESSERACT_NAMES = {
    "ar": "ara", "cs": "ces", "da": "dan", "de": "deu", "el": "ell", "en": "eng", "es": "spa",
    "fi": "fin", "fr": "fra", "he": "heb", "hi": "hin", "hu": "hun", "it": "ita", "ja": "jpn",
    "ko": "kor", "nb": "nor", "nl": "nld", "no": "nor", "pl": "pol", "pt": "por", "ro": "ron",
    "ru": "rus", "sv": "swe", "tr": "tur", "uk": "ukr", "vi": "vie", "zh": "chi_sim",
    "zh-hant": "chi_tra", "zh-tw": "chi_tra",
}  # fmt: skip
PARAGRAPH_GAP = 1.5  # of the usual line pitch: a wider gap above a line starts a paragraph
HEIGHT_STEP = 1.1  # line heights within a tenth of each other are one size
_HYPHENATED = re.compile(r"\w-$")
_ENDED = re.compile("[.!?:;\"'\u201d)\\]]$")  # a line ending a sentence


class OcrUnavailable(DocumentUnreadable):
    """The page cannot be read by OCR here: no engine, or not in the language asked."""


@dataclass(frozen=True, slots=True)
class OcrLimits:
    """A deployment's bounds on OCR (its settings, not a job's): CPU seconds a page may use,
    the pages of one document read by OCR (past them its pages without text stay empty,
    saying so), the pixels of one image (an image whose header says more is refused before it
    is decoded; a PDF page is rasterised below them), and the credits an OCR'd page costs
    beside the page's own."""

    page_budget_s: float = 10.0
    max_pages: int = 50
    max_pixels: int = 40_000_000
    page_weight: int = 1

    @property
    def document_cpu_s(self) -> float:
        """The CPU a document's pages read by OCR may add to its read, at most."""
        return self.max_pages * self.page_budget_s


@dataclass(frozen=True, slots=True)
class OcrRequest:
    """How a document's pages are read by OCR: ``mode`` (``fast``: never; ``auto``: pages
    without a text layer, and images; ``ocr``: every page); its languages (Tesseract's names,
    each one required), else the languages the pages were asked in (``asked_in``, BCP 47 tags
    of location.languages: those installed), else :data:`DEFAULT_LANGUAGES`; the DPI a PDF
    page is rasterised at; the deployment's :class:`OcrLimits`."""

    mode: OcrMode = "auto"
    languages: tuple[str, ...] = ()
    asked_in: tuple[str, ...] = ()
    dpi: int = DEFAULT_DPI
    limits: OcrLimits = OcrLimits()

    def languages_read(self) -> tuple[str, ...]:
        if self.languages:
            return self.languages
        installed = installed_languages()
        wanted = dict.fromkeys(
            name for name in map(tesseract_name, self.asked_in) if name in installed
        )
        return tuple(name for name in wanted if name) or DEFAULT_LANGUAGES


def tesseract_name(tag: str) -> str | None:
    """A BCP 47 tag's language pack (``de-DE`` → ``deu``, ``zh-Hant`` → ``chi_tra``), or None."""
    parts = tag.lower().split("-")
    return TESSERACT_NAMES.get("-".join(parts[:2])) or TESSERACT_NAMES.get(parts[0])


class OcrPages:
    """The pages one document has read by OCR, within its limits: :meth:`read` each."""

    def __init__(self, request: OcrRequest) -> None:
        self.request = request
        self.read_count = 0
        self.left_unread = 0  # pages that wanted OCR past the limit

    def allowed(self) -> bool:
        """Whether another page may be read (counted as left unread when not)."""
        if self.read_count < self.request.limits.max_pages:
            return True
        self.left_unread += 1
        return False

    def read(self, image: Image) -> list[Line]:
        """``image`` read: its lines in reading order, a blank line between paragraphs."""
        self.read_count += 1
        extend_cpu(self.request.limits.page_budget_s)
        return recognised(image, self.request.languages_read())

    def note(self) -> str | None:
        """What the result says of pages left unread, or None."""
        if not self.left_unread:
            return None
        limit = self.request.limits.max_pages
        return (
            f"{self.left_unread} pages without text left unread: OCR reads {limit} pages of a "
            "document at most (SCRAPEJOBS_OCR_MAX_PAGES)"
        )


def recognised(image: Image, languages: tuple[str, ...]) -> list[Line]:
    """``image``'s lines read by Tesseract in ``languages``."""
    engine = _engine(_tessdata(), "+".join(languages))
    engine.SetImage(image.convert("L") if image.mode not in ("L", "1") else image)
    try:
        engine.Recognize()
        return _lines(engine)
    finally:
        engine.Clear()


def installed_languages() -> tuple[str, ...]:
    """The language packs installed (``osd`` aside), or none when Tesseract has none here."""
    path = tessdata_path()
    if path is None:
        return ()
    return tuple(
        sorted(p.stem for p in Path(path).glob("*.traineddata") if p.stem not in ("osd", "equ"))
    )


def tessdata_path() -> str | None:
    """Where the language packs are: ``TESSDATA_PREFIX``, else the first of
    :data:`TESSDATA_PLACES` holding one."""
    given = os.environ.get("TESSDATA_PREFIX")
    for place in (given, *TESSDATA_PLACES) if given else TESSDATA_PLACES:
        if place and any(Path(place).glob("*.traineddata")):
            return place
    return None


def _tessdata() -> str:
    path = tessdata_path()
    if path is None:
        raise OcrUnavailable(
            "the page has no text layer and OCR is not installed here (Debian's tesseract-ocr-eng)"
        )
    return path


@functools.lru_cache(maxsize=2)
def _engine(path: str, languages: str) -> Any:
    """Tesseract loaded in ``languages`` (once a process: loading takes ~0.1 s)."""
    import tesserocr  # type: ignore[import-untyped]

    missing = [
        name for name in languages.split("+") if not Path(path, f"{name}.traineddata").exists()
    ]
    if missing:
        have = ", ".join(installed_languages()) or "none"
        raise OcrUnavailable(
            f"OCR in {', '.join(missing)} is not installed here (installed: {have})"
        )
    return tesserocr.PyTessBaseAPI(
        path=path.rstrip("/") + "/",
        lang=languages,
        psm=tesserocr.PSM.AUTO,
        oem=tesserocr.OEM.LSTM_ONLY,
    )


def _lines(engine: Any) -> list[Line]:
    """The recognised lines in reading order, a blank one between paragraphs: where a block
    (a column, a caption) starts, or where the gap above a line is clearly wider than the page's
    usual line pitch (Tesseract's own paragraphs split a paragraph at a short line too often to
    be followed), unless the line before ends mid-sentence and this one goes on in lower case
    (a paragraph going on in the next column). A word broken by a hyphen at a line's end is
    marked :data:`HYPHEN` when the next line goes on in lower case."""
    from tesserocr import RIL

    read: list[tuple[str, float, int, bool]] = []  # text, size, top, starts a block
    iterator = engine.GetIterator()
    if iterator is None:
        return []
    while True:
        block = iterator.IsAtBeginningOf(RIL.BLOCK)
        text = " ".join(_line_text(iterator).split())
        box = iterator.BoundingBox(RIL.TEXTLINE)
        if text and box is not None:
            height = iterator.RowAttributes().get("row_height", 0.0)
            read.append((text, _size(height), box[1], block))
        if not iterator.Next(RIL.TEXTLINE):
            break
    pitches = sorted(b[2] - a[2] for a, b in itertools.pairwise(read) if not b[3] and b[2] > a[2])
    usual = pitches[len(pitches) // 2] if pitches else 0
    found: list[Line] = []
    for n, (text, size, top, block) in enumerate(read):
        before = read[n - 1]
        if block and n and not _ENDED.search(before[0]) and text[:1].islower():
            block = False  # a sentence going on in the next column
        if n and (block or (usual and top - before[2] > PARAGRAPH_GAP * usual)):
            found.append(Line("", 0.0))
        found.append(Line(text, size))
    for n, line in enumerate(found[:-1]):
        after = found[n + 1].text
        if _HYPHENATED.search(line.text) and after[:1].islower():
            found[n] = Line(line.text[:-1] + HYPHEN, line.size)
    return found


def _line_text(iterator: Any) -> str:
    """The iterator's line (tesserocr raises on a line of no text: a blank page's)."""
    from tesserocr import RIL

    try:
        return iterator.GetUTF8Text(RIL.TEXTLINE) or ""
    except RuntimeError:
        return ""


def _size(height: float) -> float:
    """A line's height, in steps of :data:`HEIGHT_STEP` (lines of one font size are one)."""
    if height <= 1:
        return 0.0
    return round(HEIGHT_STEP ** round(math.log(height, HEIGHT_STEP)), 1)
