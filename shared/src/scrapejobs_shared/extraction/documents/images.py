"""Images (PNG, JPEG, TIFF, WebP, GIF) read as documents: their text, by OCR (ocr.py).

An image is a stranger's file: its header is read first (Pillow opens lazily) and an image
whose header says more pixels than the deployment's limit (``SCRAPEJOBS_OCR_MAX_PIXELS``) is
refused before anything is decoded: a decompression bomb (a PNG of 60,000 by 60,000 pixels is
a few kilobytes) fails alone, saying so. A broken or truncated image fails with Pillow's
reason. A TIFF's pages are the document's pages (up to ``max_pages``); a GIF or WebP is read
in its first frame. ``ocr`` mode ``fast`` reads no image (an image has no text layer).
"""

from __future__ import annotations

import io
import re
import warnings

from PIL import Image, ImageOps, UnidentifiedImageError

from .document import Document, DocumentOptions, DocumentPage, DocumentUnreadable
from .ocr import OcrPages, OcrRequest
from .page_lines import Line, written_pages

WORKING_PIXELS = 12_000_000  # an image larger is scaled down to this before OCR
_CLAIMED = re.compile(r"\((\d+) pixels\)")  # in Pillow's DecompressionBombError


def read_image(data: bytes, options: DocumentOptions) -> Document:
    """``data`` (an image) read by OCR: a page a frame (a TIFF's pages), its text's markdown."""
    request = options.ocr or OcrRequest()
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            image = Image.open(io.BytesIO(data))
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            # past Pillow's own limit (far past ours): said as ours
            claimed = _CLAIMED.search(str(exc))
            pixels = f"{int(claimed.group(1)):,} pixels" if claimed else "too many pixels"
            raise DocumentUnreadable(_too_large(pixels, request.limits.max_pixels)) from None
        except UnidentifiedImageError as exc:
            raise DocumentUnreadable(f"the image cannot be read: {exc}") from None
    with image:
        width, height = image.size
        limit = request.limits.max_pixels
        if width * height > limit:
            raise DocumentUnreadable(_too_large(f"{width:,} by {height:,} pixels", limit))
        frames = getattr(image, "n_frames", 1) if image.format == "TIFF" else 1
        ocr = OcrPages(request)
        pages: list[list[Line]] = []
        for frame in range(min(frames, options.max_pages)):
            image.seek(frame)
            if image.size[0] * image.size[1] > limit:  # a TIFF's frames each have a size
                size = f"{image.size[0]:,} by {image.size[1]:,} pixels"
                raise DocumentUnreadable(_too_large(size, limit))
            if request.mode == "fast" or not ocr.allowed():
                pages.append([])
                continue
            pages.append(ocr.read(_prepared(image)))
    written = written_pages(pages, [True] * len(pages))  # a TIFF's running lines left out
    read = tuple(DocumentPage(n + 1, markdown, text) for n, (markdown, text) in enumerate(written))
    notes = tuple(note for note in (ocr.note(),) if note)
    metadata = {"page_count": frames, "width": width, "height": height}
    return Document(read, frames, dict(metadata), options.page_markers, ocr.read_count, notes)


def _too_large(size: str, limit: int) -> str:
    return (
        f"the image is {size}, more than {limit:,} (SCRAPEJOBS_OCR_MAX_PIXELS; a decompression "
        "bomb?)"
    )


def _prepared(image: Image.Image) -> Image.Image:
    """The frame as a grey image Tesseract reads: its EXIF orientation applied, transparency
    on white, scaled down past :data:`WORKING_PIXELS`."""
    if image.format == "JPEG":
        image.draft("L", _fitting(image.size))  # decoded smaller, in the decoder itself
    frame = ImageOps.exif_transpose(image)
    if frame.mode in ("RGBA", "LA", "P", "PA"):
        frame = frame.convert("RGBA")
        white = Image.new("RGBA", frame.size, "white")
        frame = Image.alpha_composite(white, frame)
    grey = frame.convert("L")
    target = _fitting(grey.size)
    return grey if target == grey.size else grey.resize(target, Image.Resampling.LANCZOS)


def _fitting(size: tuple[int, int]) -> tuple[int, int]:
    width, height = size
    if width * height <= WORKING_PIXELS:
        return size
    ratio = (WORKING_PIXELS / (width * height)) ** 0.5
    return max(1, int(width * ratio)), max(1, int(height * ratio))
