"""Small valid PDFs written by hand: one page of Helvetica lines with link annotations (URI
actions), or pages of text: what the test site and the benchmark serve when they need PDFs
whose text or links they choose."""

from __future__ import annotations

from collections.abc import Sequence


def simple_pdf(lines: list[str], links: Sequence[str] = ()) -> bytes:
    """One page: ``lines`` of text from the top, and a link annotation to each of ``links``."""
    text = " ".join(f"({_escaped(line)}) Tj 0 -16 Td" for line in lines)
    stream = f"BT /F1 12 Tf 72 720 Td {text} ET".encode("latin-1")
    annots = " ".join(f"{6 + n} 0 R" for n in range(len(links)))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        (
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            f"/Resources << /Font << /F1 5 0 R >> >> /Annots [{annots}] >>"
        ).encode(),
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for n, url in enumerate(links):
        bottom = 100 + 20 * n
        objects.append(
            f"<< /Type /Annot /Subtype /Link /Rect [72 {bottom} 300 {bottom + 16}] "
            f"/Border [0 0 0] /A << /S /URI /URI ({_escaped(url)}) >> >>".encode("latin-1")
        )
    return pdf_of(objects)


def text_pdf(pages: Sequence[Sequence[str]]) -> bytes:
    """One page of Helvetica lines for each of ``pages``, the first line of each in a larger
    font (a heading)."""
    streams = []
    for lines in pages:
        head, *rest = lines or [""]
        body = " ".join(f"({_escaped(line)}) Tj 0 -14 Td" for line in rest)
        streams.append(f"BT /F1 18 Tf 72 740 Td ({_escaped(head)}) Tj 0 -28 Td /F1 10 Tf {body} ET")
    return pages_pdf(streams)


def pages_pdf(streams: Sequence[str], font: str = "Helvetica") -> bytes:
    """A US Letter page for each content stream of ``streams``, their text in ``font`` (one of
    PDF's standard fonts, named ``/F1``)."""
    count = len(streams)
    kids = " ".join(f"{4 + 2 * n} 0 R" for n in range(count))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode(),
        f"<< /Type /Font /Subtype /Type1 /BaseFont /{font} >>".encode(),
    ]
    for n, text in enumerate(streams):
        stream = text.encode("latin-1")
        objects.append(
            (
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                f"/Contents {5 + 2 * n} 0 R /Resources << /Font << /F1 3 0 R >> >> >>"
            ).encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    return pdf_of(objects)


def pdf_of(objects: Sequence[bytes]) -> bytes:
    """A PDF of ``objects`` (numbered from 1; the first the catalog), with its cross-reference
    table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
