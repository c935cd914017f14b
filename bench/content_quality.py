"""Content quality of the ``markdown`` format (``make bench-quality``): its main content scored
on the two public extraction benchmarks, each with its own metric, beside trafilatura in the
same run, with CPU per page.

    python bench/content_quality.py --scrapinghub DIR --wcxb DIR [--json FILE] [--pages N]

``--scrapinghub``: a checkout of github.com/scrapinghub/article-extraction-benchmark (its
``html/`` and ``ground-truth.json``); ``--wcxb``: the ``dev`` folder of a checkout of
github.com/Murrough-Foley/web-content-extraction-benchmark (``dev/html``, ``dev/ground-truth``).
Tune on WCXB's ``dev`` split only: ``test`` is the held-out check of whoever measures. Either
may be left out; ``tests/data/extraction_sample`` holds a small sample of both (the CI floor).

Each benchmark is scored twice: as it defines itself, and with the page's title counted as
content (``with_title``: both leave the title out of their answers, and a reader reads it
first). Then the page-shape suite (tests/support/page_shapes.py: pages in the markup of common
shop platforms and page kinds, each with what must and must not be in the markdown): how many
pages each extractor passes, and what each failing page misses or lets in.

Our answer is what a job asking for ``formats: ["markdown"]`` stores (``extract_page``, default
options: main content only), read as text (link targets dropped: ``markdown_text``).
trafilatura runs with its defaults (``trafilatura.extract(html, url=url)``, plain text) when it
is installed (``uv sync --group quality``). CPU per page is this process's CPU time of one call,
from the page's bytes (parsing included) to what the extractor hands its user (our markdown,
trafilatura's text); reading our markdown as the benchmarks' text is scoring, not timed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.extraction_benchmarks import (  # noqa: E402
    WCXB_TYPES,
    BenchmarkPage,
    Score,
    markdown_text,
    scrapejobs_markdown,
    scrapinghub_pages,
    scrapinghub_score,
    shingle_counts,
    wcxb_pages,
    wcxb_score,
    with_title,
    word_f1,
)
from support.page_shapes import SHAPES, ShapeVerdict, verdict  # noqa: E402

# What an extractor hands its user for a page (timed), and how the benchmarks read it (not).
Extractor = tuple[Callable[[BenchmarkPage], str], Callable[[str], str]]


def _as_is(text: str) -> str:
    return text


def extractors() -> dict[str, Extractor]:
    chosen: dict[str, Extractor] = {"scrapejobs markdown": (scrapejobs_markdown, markdown_text)}
    try:
        import trafilatura
    except ImportError:
        print("trafilatura not installed (uv sync --group quality): scored alone", file=sys.stderr)
        return chosen

    def trafilatura_text(page: BenchmarkPage) -> str:
        return trafilatura.extract(page.html, url=page.url or None) or ""

    chosen[f"trafilatura {trafilatura.__version__}"] = (trafilatura_text, _as_is)
    return chosen


def run(extractor: Extractor, pages: Iterable[BenchmarkPage]) -> tuple[dict[str, str], float]:
    """Each page's answer, and the mean CPU seconds a page."""
    extract, read = extractor
    answers: dict[str, str] = {}
    cpu = 0.0
    for page in pages:
        started = time.process_time()
        output = extract(page)
        cpu += time.process_time() - started
        answers[page.page_id] = read(output)
    return answers, cpu / max(1, len(answers))


def _reference(page: BenchmarkPage, titled: bool) -> str:
    reference: str = with_title(page) if titled else page.reference
    return reference


def score_scrapinghub(
    pages: list[BenchmarkPage], answers: dict[str, str], titled: bool = False
) -> Score:
    return scrapinghub_score(
        [shingle_counts(_reference(p, titled), answers[p.page_id]) for p in pages]
    )


def score_wcxb(
    pages: list[BenchmarkPage], answers: dict[str, str], titled: bool = False
) -> dict[str, Score]:
    per_type: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    overall = []
    for page in pages:
        result = word_f1(answers[page.page_id], _reference(page, titled))
        per_type[page.page_type].append(result)
        overall.append(result)
    scores = {"overall": wcxb_score(overall)}
    for kind in WCXB_TYPES:
        if per_type.get(kind):
            scores[kind] = wcxb_score(per_type[kind])
    return scores


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scrapinghub", type=Path, help="the ScrapingHub benchmark's checkout")
    parser.add_argument("--wcxb", type=Path, help="WCXB's dev folder (never test/)")
    parser.add_argument("--pages", type=int, default=0, help="only the first N pages of each")
    parser.add_argument("--only", default="", help="only extractors whose name starts so")
    parser.add_argument("--json", type=Path, help="write the figures (and each page's score) here")
    parser.add_argument("--answers", type=Path, help="write each extractor's answers here")
    args = parser.parse_args()
    if args.scrapinghub is None and args.wcxb is None:
        sample = ROOT / "tests" / "data" / "extraction_sample"
        print(f"no dataset given: scoring the committed sample in {sample}", file=sys.stderr)
        args.scrapinghub, args.wcxb = sample / "scrapinghub", sample / "wcxb"
    if args.wcxb is not None and args.wcxb.name == "test":
        parser.error("WCXB's test split is held out: tune and report on dev")
    chosen = {n: e for n, e in extractors().items() if n.startswith(args.only)}
    figures: dict[str, dict[str, object]] = {}
    saved: dict[str, dict[str, dict[str, str]]] = {}
    datasets: list[tuple[str, list[BenchmarkPage]]] = []
    if args.scrapinghub is not None:
        datasets.append(("scrapinghub", _first(scrapinghub_pages(args.scrapinghub), args.pages)))
    if args.wcxb is not None:
        datasets.append(("wcxb", _first(wcxb_pages(args.wcxb), args.pages)))
    for dataset, pages in datasets:
        for name, extractor in chosen.items():
            answers, cpu = run(extractor, pages)
            saved.setdefault(dataset, {})[name] = answers
            for titled in (False, True):
                key = f"{dataset}, title counted" if titled else dataset
                figures.setdefault(key, {})[name] = _figures(dataset, pages, answers, titled, cpu)
    shapes = {name: shape_suite(extractor) for name, extractor in chosen.items()}
    _print(figures)
    _print_shapes(shapes)
    figures["page shapes"] = {name: _shape_figures(verdicts) for name, verdicts in shapes.items()}
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2))
    if args.answers:
        args.answers.write_text(json.dumps(saved))
    return 0


def _figures(
    dataset: str, pages: list[BenchmarkPage], answers: dict[str, str], titled: bool, cpu: float
) -> dict[str, object]:
    if dataset == "scrapinghub":
        return {**_asdict(score_scrapinghub(pages, answers, titled)), "cpu_ms": cpu * 1e3}
    scores = score_wcxb(pages, answers, titled)
    return {"cpu_ms": cpu * 1e3, **{kind: _asdict(s) for kind, s in scores.items()}}


def _shape_figures(verdicts: list[ShapeVerdict]) -> dict[str, object]:
    return {
        "passed": sum(v.passed for v in verdicts),
        "pages": len(verdicts),
        "failing": {
            v.shape.name: {"missing": v.missing, "present": v.present}
            for v in verdicts
            if not v.passed
        },
    }


def shape_suite(extractor: Extractor) -> list[ShapeVerdict]:
    """Each page of the page-shape suite read by ``extractor``, and how it holds up."""
    extract, read = extractor
    verdicts = []
    for shape in SHAPES:
        page = BenchmarkPage(shape.name, f"https://shop.test{shape.path}", shape.html, "", "")
        verdicts.append(verdict(shape, read(extract(page))))
    return verdicts


def _print_shapes(shapes: dict[str, list[ShapeVerdict]]) -> None:
    print(
        f"\npage shapes ({len(SHAPES)} pages: all of what each must hold, none of what it must not)"
    )
    for name, verdicts in shapes.items():
        print(f"  {name:<24} {sum(v.passed for v in verdicts)}/{len(verdicts)}")
        for v in verdicts:
            if not v.passed:
                print(f"    {v.shape.name}: missing {list(v.missing)}, present {list(v.present)}")


def _first(pages: Iterable[BenchmarkPage], n: int) -> list[BenchmarkPage]:
    every = list(pages)
    return every[:n] if n else every


def _asdict(score: Score) -> dict[str, float]:
    return {
        "f1": score.f1,
        "precision": score.precision,
        "recall": score.recall,
        "pages": score.pages,
    }


def _print(figures: dict[str, dict[str, object]]) -> None:
    for dataset, by_name in figures.items():
        print(f"\n{dataset}")
        if dataset.startswith("scrapinghub"):
            print(f"  {'extractor':<24} {'F1':>6} {'P':>6} {'R':>6} {'CPU ms':>7}")
            for name, f in by_name.items():
                assert isinstance(f, dict)
                cells = " ".join(f"{f[k]:>6.3f}" for k in ("f1", "precision", "recall"))
                print(f"  {name:<24} {cells} {f['cpu_ms']:>7.1f}")
            continue
        kinds = ["overall", *WCXB_TYPES]
        print(
            f"  {'extractor':<24} " + " ".join(f"{k[:10]:>10}" for k in kinds) + f" {'CPU ms':>7}"
        )
        for name, f in by_name.items():
            assert isinstance(f, dict)
            cells = " ".join(f"{f[k]['f1']:>10.3f}" if k in f else f"{'-':>10}" for k in kinds)
            print(f"  {name:<24} {cells} {f['cpu_ms']:>7.1f}")


if __name__ == "__main__":
    raise SystemExit(main())
