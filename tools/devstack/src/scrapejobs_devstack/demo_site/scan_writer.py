"""Scans made from known text: pages of text written as a PDF (one column or two, a running
header and a page number if asked), rasterised as a scanner would (a DPI, a slight skew, grey
noise), then saved as an image-only PDF or as images. What the tests and the benchmark read by
OCR, knowing what each page says, and the score of what was read (:func:`word_f1`)."""

from __future__ import annotations

import io
import random
import re
import textwrap
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy
import pypdfium2 as pdfium  # type: ignore[import-untyped]
from PIL import Image

from .pdf_writer import pages_pdf

WIDTH, HEIGHT = 612, 792  # points: US Letter (pdf_writer.pages_pdf's)
MARGIN = 72
LEADING = 14  # points between lines at 11 pt
COLUMN_GAP = 24


@dataclass(frozen=True, slots=True)
class ScanPage:
    """A page's paragraphs, in reading order, and how they are laid out."""

    paragraphs: Sequence[str]
    heading: str = ""
    columns: int = 1
    header: str = ""  # a running header at the top
    number: int | None = None  # a page number at the bottom

    def text(self) -> str:
        """What the page says, as a reader reads it (no running header or page number)."""
        return "\n\n".join(([self.heading] if self.heading else []) + list(self.paragraphs))


def text_pdf(pages: Sequence[ScanPage]) -> bytes:
    """``pages`` written in Times-Roman 11 pt (a heading at 18 pt), with a text layer."""
    return pages_pdf([_page_stream(page) for page in pages], font="Times-Roman")


def _page_stream(page: ScanPage) -> str:
    parts = []
    top = HEIGHT - MARGIN
    if page.header:
        parts.append(_at(MARGIN, HEIGHT - 40, 9, page.header))
    if page.heading:
        parts.append(_at(MARGIN, top, 18, page.heading))
        top -= 34
    width = (WIDTH - 2 * MARGIN - COLUMN_GAP * (page.columns - 1)) / page.columns
    chars = int(width / 5.0)  # Times-Roman 11 pt: about 5 points a character
    lines: list[str] = []
    for paragraph in page.paragraphs:
        lines += [*textwrap.wrap(paragraph, chars), ""]
    per_column = -(-len(lines) // page.columns)
    for column in range(page.columns):
        x = MARGIN + column * (width + COLUMN_GAP)
        for row, line in enumerate(lines[column * per_column : (column + 1) * per_column]):
            if line:
                parts.append(_at(x, top - row * LEADING, 11, line))
    if page.number is not None:
        parts.append(_at(WIDTH / 2 - 5, 40, 10, str(page.number)))
    return " ".join(parts)


def _at(x: float, y: float, size: int, text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return f"BT /F1 {size} Tf {x:.1f} {y:.1f} Td ({escaped}) Tj ET"


def scanned(
    pdf: bytes, dpi: int = 200, skew: float = 0.7, noise: float = 12.0, seed: int = 1
) -> list[Image.Image]:
    """Each page of ``pdf`` as a scanner gives it: grey at ``dpi``, turned by up to ``skew``
    degrees either way, with grey noise of ``noise`` (its standard deviation); the same
    ``seed``, the same images."""
    chance = random.Random(seed)
    grains = numpy.random.default_rng(seed)
    document = pdfium.PdfDocument(pdf)
    images = []
    try:
        for n in range(len(document)):
            page = document[n].render(scale=dpi / 72, grayscale=True).to_pil().convert("L")
            page = page.rotate(
                chance.uniform(-skew, skew), resample=Image.Resampling.BICUBIC, fillcolor=255
            )
            if noise:  # PIL's effect_noise draws from C's rand(): not seeded, not repeatable
                grain = grains.normal(0.0, noise, (page.height, page.width))
                grey = numpy.asarray(page, dtype=numpy.float64) + grain
                page = Image.fromarray(numpy.clip(grey, 0, 255).round().astype(numpy.uint8))
            images.append(page)
    finally:
        document.close()
    return images


def image_pdf(images: Sequence[Image.Image], dpi: int = 200, quality: int = 50) -> bytes:
    """``images`` as a PDF of one image a page and no text layer, each a JPEG of ``quality``
    (a scanner's PDF: a noisy 200 dpi page is about 440 KB)."""
    out = io.BytesIO()
    first, *rest = images
    first.save(
        out, format="PDF", save_all=True, append_images=rest, resolution=dpi, quality=quality
    )
    return out.getvalue()


def image_bytes(image: Image.Image, format: str = "PNG") -> bytes:
    out = io.BytesIO()
    image.save(out, format=format)
    return out.getvalue()


def made_scan(pages: Sequence[ScanPage], dpi: int = 200, seed: int = 1) -> bytes:
    """``pages`` as a scanned PDF (image-only)."""
    return image_pdf(scanned(text_pdf(pages), dpi=dpi, seed=seed), dpi=dpi)


def bomb_png(width: int = 60_000, height: int = 60_000) -> bytes:
    """A PNG whose header says ``width`` by ``height`` pixels, of a few bytes: a decompression
    bomb's header (its data is one empty row, so a decoder that trusted it would allocate
    gigabytes before finding out)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    rows = zlib.compress(b"\x00" * (width + 1))  # one grey row
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")
    )


def word_f1(expected: str, found: str) -> float:
    """Bag-of-words F1 (``\\w+``, lower-cased) of ``found`` against ``expected``."""
    want = Counter(re.findall(r"\w+", expected.lower()))
    got = Counter(re.findall(r"\w+", found.lower()))
    hits = sum((want & got).values())
    if not hits:
        return 0.0
    precision, recall = hits / sum(got.values()), hits / sum(want.values())
    return 2 * precision * recall / (precision + recall)
