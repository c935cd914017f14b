"""Write the committed sample of both content benchmarks (tests/data/extraction_sample) from
their checkouts, the same files in the same layouts, licences beside them.

    python bench/content_sample.py --scrapinghub DIR --wcxb DIR

ScrapingHub: every ninth page (by id). WCXB dev: the first four pages (by id) of each page type
whose gzipped HTML is under 120 KB. The floor test (tests/unit/extraction/test_content_floor.py)
scores this sample.
"""

from __future__ import annotations

import argparse
import json
import shutil
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "tests" / "data" / "extraction_sample"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scrapinghub", type=Path, required=True)
    parser.add_argument("--wcxb", type=Path, required=True, help="the checkout (its dev/ is read)")
    args = parser.parse_args()
    shutil.rmtree(SAMPLE, ignore_errors=True)
    target = SAMPLE / "scrapinghub"
    (target / "html").mkdir(parents=True)
    truth = json.loads((args.scrapinghub / "ground-truth.json").read_text(encoding="utf-8"))
    chosen = sorted(truth)[::9]
    for page_id in chosen:
        shutil.copy(args.scrapinghub / "html" / f"{page_id}.html.gz", target / "html")
    (target / "ground-truth.json").write_text(
        json.dumps({k: truth[k] for k in chosen}, indent=1, ensure_ascii=False), encoding="utf-8"
    )
    shutil.copy(args.scrapinghub / "LICENSE", target / "LICENSE")
    target = SAMPLE / "wcxb"
    (target / "html").mkdir(parents=True)
    (target / "ground-truth").mkdir()
    taken: dict[str, int] = defaultdict(int)
    for truth_file in sorted((args.wcxb / "dev" / "ground-truth").glob("*.json")):
        html = args.wcxb / "dev" / "html" / f"{truth_file.stem}.html.gz"
        data = json.loads(truth_file.read_text(encoding="utf-8"))
        internal = data.get("_internal") or {}
        kind = (internal.get("page_type") or {}).get("primary", "article")
        kind = "collection" if kind == "category" else kind
        if taken[kind] >= 4 or html.stat().st_size > 120_000:
            continue
        taken[kind] += 1
        shutil.copy(truth_file, target / "ground-truth")
        shutil.copy(html, target / "html")
    shutil.copy(args.wcxb / "LICENSE", target / "LICENSE")
    print(f"scrapinghub: {len(chosen)} pages; wcxb: {dict(taken)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
