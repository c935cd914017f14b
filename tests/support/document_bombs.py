"""Documents built to exhaust a reader: a PDF whose page content inflates to far more than it
weighs (a decompression bomb), a PDF of very many pages (a page bomb)."""

from __future__ import annotations

import struct
import zlib
from functools import cache

from scrapejobs_devstack.demo_site.pdf_writer import pdf_of, simple_pdf


@cache
def flate_bomb_pdf(inflated_mb: int = 768) -> bytes:
    """One page whose content stream inflates to ``inflated_mb`` MiB of zeros (~1 MiB on disk
    for 1 GiB): reading its text makes PDFium inflate it all."""
    deflate = zlib.compressobj(9)
    chunk = b"\0" * (1 << 20)
    stream = b"".join(deflate.compress(chunk) for _ in range(inflated_mb)) + deflate.flush()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    return pdf_of(objects)


def page_bomb_pdf(pages: int) -> bytes:
    """A page tree whose ``pages`` leaves are all the same page."""
    one = simple_pdf(["the same page, again and again"])
    kids = b" ".join([b"3 0 R"] * pages)
    return one.replace(b"/Kids [3 0 R] /Count 1", b"/Kids [" + kids + b"] /Count %d" % pages)


def entry_bomb_zip(entries: int = 446_000) -> bytes:
    """A zip whose central directory lists ``entries`` one-letter names, each the same empty
    file (20 MiB, 60 KiB gzipped: the review's), made by hand."""
    name = b"x"
    local = struct.pack("<4s5H3I2H", b"PK\x03\x04", 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0) + name
    entry = struct.pack(
        "<4s6H3I5H2I", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0, 0, 0, 0, 0, 0
    )
    directory = (entry + name) * entries
    count = min(entries, 0xFFFF)
    end = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, count, count, len(directory), len(local), 0)
    return local + directory + end
