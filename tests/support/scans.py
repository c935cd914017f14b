"""Scans of known text for the OCR tests (scrapejobs_devstack/demo_site/scan_writer.py): pages
of plain English prose, each different, with a running header and a page number."""

from __future__ import annotations

from functools import cache

from scrapejobs_devstack.demo_site.scan_writer import (
    ScanPage,
    bomb_png,
    image_bytes,
    made_scan,
    scanned,
    text_pdf,
    word_f1,
)

__all__ = ["scan_files", "scan_pages", "scanned_pdf", "word_f1"]

PROSE = (
    "The harbour master kept a ledger of every ship that entered the bay, noting its cargo, "
    "its crew and the weather on the morning it arrived.",
    "In the spring of that year the ledger filled quickly: grain from the north, timber from "
    "the eastern forests and wine that travelled in barrels packed with straw.",
    "Each evening the clerks compared their figures with the customs house, and any ship whose "
    "papers disagreed was held at anchor until a magistrate could read them.",
    "Travellers who waited on the quay wrote letters about the delay, complaining of the wind "
    "and the price of lodging, yet most of them admired the order of the place.",
    "When the summer storms came the harbour closed for nine days, and the ledger recorded "
    "only the names of fishing boats that sheltered behind the long stone wall.",
    "By autumn the trade had recovered, and the harbour master reported to the council that "
    "revenue had risen by a fifth compared with the year before.",
)
HEADER = "Harbour Records, Volume Two"
NUMBERS = ("One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten")


def scan_pages(count: int, columns: int = 1) -> list[ScanPage]:
    """``count`` pages, each a heading and three paragraphs of :data:`PROSE`, from the page's
    own (no two of six pages alike)."""
    return [
        ScanPage(
            [PROSE[(n + k) % len(PROSE)] for k in range(3)],
            heading=f"Chapter {NUMBERS[n % len(NUMBERS)]}",
            columns=columns,
            header=HEADER,
            number=n + 1,
        )
        for n in range(count)
    ]


def scanned_pdf(count: int, columns: int = 1) -> bytes:
    return made_scan(scan_pages(count, columns))


@cache
def scan_files() -> dict[str, tuple[bytes, str]]:
    """What the test site serves under ``/scans/``: a scanned PDF of two pages, one page as a
    PNG, a PNG whose header claims 60,000 by 60,000 pixels, and a broken PNG."""
    [page] = scan_pages(1)
    png = image_bytes(scanned(text_pdf([page]))[0])
    return {
        "scan.pdf": (scanned_pdf(2), "application/pdf"),
        "scan.png": (png, "image/png"),
        "bomb.png": (bomb_png(60_000, 60_000), "image/png"),
        "corrupt.png": (png[:200] + b"\0" * 64, "image/png"),
    }
