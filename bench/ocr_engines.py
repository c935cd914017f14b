"""How OCR's engine was chosen (issue 74): word F1 and CPU a page of the same made scans
(bench/ocr_workload.py's: the docs' prose at 200 dpi, skewed, noisy) read by each engine on
one thread, in this process.

* ``tesseract``: Tesseract 5's LSTM engine through tesserocr (the one the services use), its
  page segmentation on (columns, paragraphs), Debian's ``eng`` language pack.
* ``rapidocr``: RapidOCR (PaddleOCR's detection and recognition models, ONNX, inside its
  wheel), when ``rapidocr_onnxruntime`` is installed (``uv pip install rapidocr_onnxruntime``:
  not a dependency of the project).

``python bench/ocr_engines.py [--pages N]`` prints one row an engine.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PIL.Image import Image

from bench.ocr_workload import scan_pages
from scrapejobs_devstack.demo_site.scan_writer import scanned, text_pdf, word_f1


def tesseract() -> Callable[[Image], str]:
    from scrapejobs_shared.extraction.documents.ocr import recognised

    return lambda image: "\n".join(line.text for line in recognised(image, ("eng",)))


def rapidocr() -> Callable[[Image], str] | None:
    try:
        import numpy
        from rapidocr_onnxruntime import RapidOCR  # type: ignore[import-not-found]
    except ImportError:
        return None
    engine = RapidOCR(intra_op_num_threads=1, inter_op_num_threads=1)

    def read(image: Image) -> str:
        found, _ = engine(numpy.asarray(image.convert("RGB")))
        return "\n".join(row[1] for row in found or [])

    return read


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=5)
    args = parser.parse_args(argv)
    pages = scan_pages(args.pages)
    images = scanned(text_pdf(pages))
    for name, make in (("tesseract", tesseract), ("rapidocr", rapidocr)):
        read = make()
        if read is None:
            print(f"{name}: not installed")
            continue
        read(images[0])  # models loaded
        scores, cpu = [], 0.0
        for page, image in zip(pages, images, strict=True):
            started = time.process_time()
            text = read(image)
            cpu += time.process_time() - started
            scores.append(word_f1(page.text(), text))
        mean = sum(scores) / len(scores)
        print(
            f"{name}: word F1 {mean:.4f} (worst page {min(scores):.4f}), "
            f"{cpu / len(pages):.2f} CPU-s a page, {len(pages)} pages at 200 dpi"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
