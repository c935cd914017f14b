"""Where work whose cost a caller controls meets an engine (a regex engine, a diff, a zip, XML,
HTML or document parser, a decoder), read from the source: every module importing one is
listed here with where it runs and what bounds it, and every service module using such a
module on the event loop's side is listed with why that is safe. A new meeting fails until it
is put under a budget (the budgeted-work port, ports/budgeted_work.py, or the extraction
processes) and written down here: a bound is not added only where a review looks."""

from __future__ import annotations

import ast
from pathlib import Path

from test_architecture import MODULES

ENGINES = (
    "re2",
    "difflib",
    "rapidfuzz",
    "zipfile",
    "lxml",
    "xml",
    "parsel",
    "cssselect",
    "html_to_markdown",
    "jsonschema",
    "pypdfium2",
    "PIL",
    "tesserocr",
    "mammoth",
    "python_calamine",
    "pptx",
    "striprtf",
    "protego",
    "gzip",
    "zlib",
    "brotli",
    "bz2",
    "lzma",
)
EXTRACTION = "the extraction processes (worker) and a parse process (dispatcher uploads)"
# every module that imports an engine, and where it runs
ENGINE_USERS = {
    "scrapejobs_shared.extraction.user_regex": "RE2, compiled within 512 KiB; its matches run in "
    "the extraction processes or through the budgeted-work port (crawl links, stage work)",
    "scrapejobs_shared.extraction.re2_internals": "RE2's uncached compile, for user_regex only",
    "scrapejobs_shared.domain.page_diff": "a bit-parallel LCS of at most 5,000 lines a side, "
    "through the budgeted-work port (monitors/page_comparisons.py)",
    "scrapejobs_shared.extraction.css_selector": "a selector of at most 1,000 characters "
    "translated once at submit",
    "scrapejobs_shared.domain.monitor_rules": "a monitor's ignore_selectors, each checked "
    "once at submit (bounded length)",
    "scrapejobs_shared.politeness.robots_rules": "a robots.txt's first 500 KiB; protego "
    "matches without backtracking",
    "scrapejobs_shared.adapters.firestore.batch_store": "zlib of our own batch documents",
    "scrapejobs_shared.adapters.firestore.crawl_budget": "zlib's crc32 of our own batch ids "
    "(which budget shard a batch takes from)",
    "scrapejobs_scale.firestore_layout": "zlib's crc32 of our own batch ids (make scale's "
    "model of the counter shards: a tool, never on a request's path)",
    "scrapejobs_dispatcher.tenants.api_keys": "a CRC-32 of a key of bounded length",
    "scrapejobs_worker.fetching.content_encoding": "decoders bounded by the decoded size and "
    "the compression ratio (SCRAPEJOBS_MAX_BODY_BYTES)",
    "scrapejobs_devstack.demo_site.scan_writer": "rasterises PDFs it wrote itself from known "
    "text (made scans for the tests and the benchmark), never a caller's file",
    "scrapejobs_shared.pipeline.validate": "JSON Schema: in the extraction processes and "
    "through the budgeted-work port (the ai stage's stage_work.py); at submit a schema is "
    "only checked, its patterns' syntax within a tiny budget",
}
ENGINE_USER_FOLDERS = {"scrapejobs_shared.extraction": EXTRACTION}

# bounded checks of a request at submit, which any service may make
SUBMIT_CHECKS = {
    "scrapejobs_shared.extraction.css_selector",
    "scrapejobs_shared.domain.monitor_rules",
}

# service modules that import an engine's user and run it on their own side, and why safe
IN_SERVICE = {
    "scrapejobs_worker.crawl.crawl_frontier": "its filter runs through the budgeted-work port "
    "(crawl_expansion.LinkFilter)",
    "scrapejobs_worker.extraction.stage_work": "through the budgeted-work port",
    "scrapejobs_dispatcher.monitors.page_comparisons": "through the budgeted-work port",
    "scrapejobs_dispatcher.monitors.change_tracking": "page_diff's values only; the "
    "comparison through page_comparisons",
    "scrapejobs_dispatcher.rules.pattern_budget": "compiles each pattern within "
    "512 KiB in one thread off the event loop, the job's patterns counted (compiling is "
    "bounded; no pattern is matched here)",
    "scrapejobs_worker.crawl.crawl_sitemaps": "is_sitemap only (a path's suffix); sitemaps are "
    "read by the extraction processes",
    "scrapejobs_dispatcher.firecrawl.site_map": "is_sitemap (a path's suffix) and a "
    "robots.txt's first 500 KiB (robots_rules)",
    "scrapejobs_dispatcher.firecrawl.parse_routes": "OCR's installed languages (a directory "
    "listed); files are read in the parse processes",
    "scrapejobs_dispatcher.uploads.parsing_processes": "OcrLimits (a deployment's bounds) for "
    "the parse processes, where uploads are read",
}


def _direct_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _uses_engine(imports: set[str]) -> bool:
    return any(name == e or name.startswith(f"{e}.") for name in imports for e in ENGINES)


def _engine_users() -> set[str]:
    return {
        name
        for name, path in MODULES.items()
        if not name.startswith("bench.") and _uses_engine(_direct_imports(path))
    }


def _in_folder(name: str) -> bool:
    return any(name == f or name.startswith(f"{f}.") for f in ENGINE_USER_FOLDERS)


def test_every_module_using_an_engine_says_where_it_runs() -> None:
    # a module listed by name says where it runs, in a folder or not
    found = {name for name in _engine_users() if name in ENGINE_USERS or not _in_folder(name)}
    assert found - ENGINE_USERS.keys() == set(), (
        "a module imports an engine that runs on what callers control: put its work under a "
        "budget and say where it runs in ENGINE_USERS"
    )
    assert ENGINE_USERS.keys() - found == set(), "listed, but no longer imports an engine"


def test_services_run_engine_work_only_where_listed() -> None:
    users = {name for name in _engine_users() if name.startswith("scrapejobs_shared.")}
    users -= SUBMIT_CHECKS
    found = set()
    for name, path in MODULES.items():
        if not name.startswith(("scrapejobs_dispatcher.", "scrapejobs_worker.")):
            continue
        imported = _direct_imports(path)
        if any(i == user or i.startswith(f"{user}.") for i in imported for user in users):
            found.add(name)
    assert found - IN_SERVICE.keys() == set(), (
        "a service module uses an engine's module: run it through the budgeted-work port or "
        "the extraction processes, and say so in IN_SERVICE"
    )
    assert IN_SERVICE.keys() - found == set(), "listed, but no longer uses one"
