"""The ``markdown`` format's main content, scored on the committed sample of both public
benchmarks (tests/data/extraction_sample, made by bench/content_sample.py) with each one's own
metric: a change that lets boilerplate in, or drops content, fails here. The full benchmarks
run in ``make bench-quality`` (bench/content_quality.py); the floors sit a little under the
sample's scores when they were last raised."""

from __future__ import annotations

from pathlib import Path

from support.extraction_benchmarks import (
    markdown_text,
    scrapejobs_answer,
    scrapinghub_pages,
    scrapinghub_score,
    shingle_counts,
    wcxb_pages,
    wcxb_score,
    word_f1,
)

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "extraction_sample"
SCRAPINGHUB_FLOOR = 0.95
WCXB_FLOOR = 0.78


def test_the_scrapinghub_sample_scores_above_its_floor() -> None:
    pages = list(scrapinghub_pages(SAMPLE / "scrapinghub"))
    assert len(pages) == 21
    score = scrapinghub_score([shingle_counts(p.reference, scrapejobs_answer(p)) for p in pages])
    assert score.f1 >= SCRAPINGHUB_FLOOR, score


def test_the_wcxb_sample_scores_above_its_floor() -> None:
    pages = list(wcxb_pages(SAMPLE / "wcxb"))
    assert {p.page_type for p in pages} == {
        "article",
        "forum",
        "product",
        "collection",
        "listing",
        "documentation",
        "service",
    }
    score = wcxb_score([word_f1(scrapejobs_answer(p), p.reference) for p in pages])
    assert score.f1 >= WCXB_FLOOR, score


def test_the_metrics_are_the_benchmarks_own() -> None:
    """Known values, worked by hand from each evaluate.py."""
    # Four tokens, one shingle each side: identical → all true positives.
    assert shingle_counts("a b c d", "a b c d") == (1.0, 0.0, 0.0)
    # Five tokens against four: the predicted shingles (a b c d), (b c d e); the true one (a b c d).
    assert shingle_counts("a b c d", "a b c d e") == (0.5, 0.5, 0.0)
    assert word_f1("the cat sat", "the cat") == (2 / 3, 1.0, 0.8)
    assert word_f1("", "") == (1.0, 1.0, 1.0)
    assert word_f1("x", "") == (0.0, 0.0, 0.0)
    assert (
        markdown_text('See [the docs](https://e.com/a_(b) "t") and <https://e.com>.')
        == "See the docs and  ."
    )
