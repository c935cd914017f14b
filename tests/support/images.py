"""What tests read of the images the renderer made."""

from __future__ import annotations

import struct

PNG = b"\x89PNG\r\n\x1a\n"
JPEG = b"\xff\xd8\xff"


def png_size(image: bytes) -> tuple[int, int]:
    """A PNG's width and height (its IHDR chunk)."""
    assert image.startswith(PNG), image[:16]
    width, height = struct.unpack(">II", image[16:24])
    return width, height
