"""The two public main-content benchmarks, read from their own folder layouts and scored with
their own metrics (copied from each one's ``evaluate.py``, so that a score here is the score
their script would give).

* ScrapingHub's article-extraction-benchmark (github.com/scrapinghub/article-extraction-benchmark,
  MIT): ``html/<id>.html.gz`` and ``ground-truth.json`` (``{id: {"articleBody", "url"}}``);
  metric: 4-gram shingles of ``\\w+`` tokens, each page's true/false positives and negatives
  normalised to sum 1, precision and recall averaged over pages, F1 of the two averages.
* WCXB (github.com/Murrough-Foley/web-content-extraction-benchmark, CC-BY-4.0):
  ``<split>/html/<id>.html.gz`` and ``<split>/ground-truth/<id>.json``; metric: bag-of-words F1
  of lowercased ``\\w+`` tokens per page, averaged, overall and per page type (``category``
  counts as ``collection``; an empty reference scores 1 only for an empty answer).

A prediction is plain text; :func:`markdown_text` makes one of a markdown answer the way a
reader comparing extractors would (link and image targets dropped, their text kept).

Both benchmarks leave the page's title out of their answers, which is what a reader reads first;
:func:`with_title` gives a page's reference with its title counted as content (WCXB's
``ground_truth.title``; for ScrapingHub, which has none, the page's Open Graph title, else its
``<title>``), a second scoring printed beside each benchmark's own.
"""

from __future__ import annotations

import gzip
import json
import re
import statistics
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from lxml import html as lxml_html  # type: ignore[import-untyped]

from scrapejobs_shared.extraction import extract_page

WCXB_TYPES = ("article", "forum", "product", "collection", "listing", "documentation", "service")


@dataclass(frozen=True, slots=True)
class BenchmarkPage:
    page_id: str
    url: str
    html: bytes
    reference: str
    page_type: str  # "article" for every ScrapingHub page
    title: str = ""  # the page's title (see with_title)


def scrapinghub_pages(folder: Path) -> Iterator[BenchmarkPage]:
    """Each page of the ScrapingHub benchmark in ``folder`` (its checkout, or a sample of it)."""
    truth = json.loads((folder / "ground-truth.json").read_text(encoding="utf-8"))
    for page_id in sorted(truth):
        html = gzip.decompress((folder / "html" / f"{page_id}.html.gz").read_bytes())
        entry = truth[page_id]
        yield BenchmarkPage(
            page_id,
            entry.get("url", ""),
            html,
            entry.get("articleBody", ""),
            "article",
            _declared_title(html),
        )


def wcxb_pages(folder: Path) -> Iterator[BenchmarkPage]:
    """Each page of one WCXB split: ``folder`` is the split's folder (``.../dev``)."""
    for truth_file in sorted((folder / "ground-truth").glob("*.json")):
        data = json.loads(truth_file.read_text(encoding="utf-8"))
        truth = data.get("ground_truth")
        if not isinstance(truth, dict):
            continue
        html = gzip.decompress((folder / "html" / f"{truth_file.stem}.html.gz").read_bytes())
        yield BenchmarkPage(
            truth_file.stem,
            data.get("url", ""),
            html,
            truth.get("main_content", "") or "",
            _wcxb_type(data),
            str(truth.get("title") or ""),
        )


def _declared_title(html: bytes) -> str:
    """The page's Open Graph title, else its ``<title>``."""
    try:
        root = lxml_html.fromstring(html.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        root = lxml_html.fromstring(html)
    og = root.xpath("string((//meta[@property='og:title'])[1]/@content)")
    title = og or root.xpath("string((//title)[1])")
    return " ".join(str(title).split())


def with_title(page: BenchmarkPage) -> str:
    """``page``'s reference with its title counted as content: the title above it, unless the
    reference starts with it already."""
    reference = page.reference.strip()
    if not page.title or _tokens(reference[: 2 * len(page.title)]).startswith(_tokens(page.title)):
        return reference
    return f"{page.title}\n\n{reference}"


def _tokens(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def _wcxb_type(data: dict[str, object]) -> str:
    internal = data.get("_internal") or {}
    kind = internal.get("page_type", {}) if isinstance(internal, dict) else {}
    if isinstance(kind, dict):
        name = kind.get("primary", "article")
    elif isinstance(kind, str):
        name = kind
    else:
        name = "article"
    return "collection" if name == "category" else str(name)


_LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)")
_AUTOLINK = re.compile(r"<(?:https?|mailto):[^>\s]*>")


def scrapejobs_answer(page: BenchmarkPage) -> str:
    """What a job asking for ``formats: ["markdown"]`` stores for ``page`` (default options:
    main content only), read as text (:func:`markdown_text`)."""
    return markdown_text(scrapejobs_markdown(page))


def scrapejobs_markdown(page: BenchmarkPage) -> str:
    """What a job asking for ``formats: ["markdown"]`` stores for ``page`` (default options:
    main content only)."""
    extraction = extract_page(
        page.html,
        content_type="text/html",
        url=page.url or "https://example.com/",
        formats=["markdown"],
    )
    markdown = extraction.data.get("markdown")
    return markdown if isinstance(markdown, str) else ""


def markdown_text(markdown: str) -> str:
    """``markdown`` as the benchmarks read text: link and image targets dropped (their text
    kept), autolinks dropped."""
    return _AUTOLINK.sub(" ", _LINK.sub(r"\1", markdown))


# ScrapingHub's metric (evaluate.py: string_shingle_matching, metrics_from_tp_fp_fns).
_SH_TOKEN = re.compile(r"\w+", re.UNICODE | re.MULTILINE | re.IGNORECASE | re.DOTALL)


def shingle_counts(true: str, predicted: str, n: int = 4) -> tuple[float, float, float]:
    """One page's true positives, false positives and false negatives over ``n``-gram
    shingles, normalised to sum 1."""
    true_shingles = Counter(_shingles(true, n))
    predicted_shingles = Counter(_shingles(predicted, n))
    tp = fp = fn = 0.0
    for key in set(true_shingles) | set(predicted_shingles):
        t, p = true_shingles.get(key, 0), predicted_shingles.get(key, 0)
        tp += min(t, p)
        fp += max(0, p - t)
        fn += max(0, t - p)
    total = tp + fp + fn
    return (tp / total, fp / total, fn / total) if total > 0 else (tp, fp, fn)


def _shingles(text: str, n: int) -> list[tuple[str, ...]]:
    tokens = _SH_TOKEN.findall(text or "")
    return [s for i in range(max(1, len(tokens) - n + 1)) if (s := tuple(tokens[i : i + n]))]


@dataclass(frozen=True, slots=True)
class Score:
    f1: float
    precision: float
    recall: float
    pages: int


def scrapinghub_score(counts: list[tuple[float, float, float]]) -> Score:
    """F1 of the averaged precision and recall, as the benchmark's evaluate.py computes it."""
    precision = statistics.mean(_precision(*c) for c in counts if c[0] + c[1] > 0)
    recall = statistics.mean(_recall(*c) for c in counts if c[0] + c[2] > 0)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Score(f1, precision, recall, len(counts))


def _precision(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    if tp == fp == 0:
        return 0.0
    return tp / (tp + fp)


def _recall(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    if tp == fn == 0:
        return 0.0
    return tp / (tp + fn)


# WCXB's metric (evaluate.py: tokenize, word_f1).
def word_f1(predicted: str, reference: str) -> tuple[float, float, float]:
    """One page's (precision, recall, F1) over lowercased ``\\w+`` tokens."""
    predicted_tokens = re.findall(r"\w+", predicted.lower()) if predicted else []
    reference_tokens = re.findall(r"\w+", reference.lower()) if reference else []
    if not reference_tokens:
        return (1.0, 1.0, 1.0) if not predicted_tokens else (0.0, 0.0, 0.0)
    if not predicted_tokens:
        return (0.0, 0.0, 0.0)
    overlap = sum((Counter(predicted_tokens) & Counter(reference_tokens)).values())
    precision = overlap / len(predicted_tokens)
    recall = overlap / len(reference_tokens)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def wcxb_score(per_page: list[tuple[float, float, float]]) -> Score:
    """The averages of the pages' precision, recall and F1."""
    n = len(per_page)
    return Score(
        sum(p[2] for p in per_page) / n,
        sum(p[0] for p in per_page) / n,
        sum(p[1] for p in per_page) / n,
        n,
    )
