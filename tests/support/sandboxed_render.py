"""Run as an unprivileged user by tests/integration/fetching/test_browser_sandbox.py: start the
renderer's BrowserProcess with the sandbox on "auto", render a page, and print what the browser
ran with as JSON."""

from __future__ import annotations

import asyncio
import json
import sys

import psutil

from scrapejobs_worker.rendering.browser_process import BrowserPolicy, BrowserProcess


async def main(executable: str, mode: str) -> None:
    browsers = BrowserProcess(BrowserPolicy(executable, sandbox=mode))  # type: ignore[arg-type]
    try:
        async with browsers.context(10.0) as context:
            page = await context.new_page()
            await page.set_content("<p id=t>rendered</p>")
            text = await page.inner_text("#t")
            flags = {
                arg
                for child in psutil.Process().children(recursive=True)
                for arg in child.cmdline()
                if arg in ("--no-sandbox", "--type=renderer")
            }
        shown = {"text": text, "sandboxed": browsers.sandboxed, "flags": sorted(flags)}
        sys.stdout.write(json.dumps(shown) + "\n")
    finally:
        await browsers.aclose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
