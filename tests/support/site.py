"""A real HTTP site on loopback whose behaviour tests program through the URL.

Routes (``key`` separates counters between tests):
- ``/product/N``                   catalog page (true values from the devstack catalog)
- ``/flaky/KEY?fail=N&code=500``   ``code`` for the first N requests, then the product page
- ``/status/CODE/KEY``             always ``CODE``
- ``/slow/KEY?s=2&times=1``        sleeps ``s`` seconds for the first ``times`` requests
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from scrapejobs_devstack.demo_site.catalog import product_page


class Site:
    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> Site:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def count(self, path: str) -> int:
        with self.lock:
            return self.hits[path]

    def hit(self, path: str) -> int:
        with self.lock:
            self.hits[path] += 1
            return self.hits[path]


def _handler(site: Site) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            n = site.hit(parts.path)
            status, body = _route(parts.path, query, n)
            self._send(status, body)

        def _send(self, status: int, html: str) -> None:
            data = html.encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            return

    return Handler


PRODUCT = re.compile(r"^/product/(\d+)$")


def _route(path: str, query: dict[str, str], n: int) -> tuple[int, str]:
    if match := PRODUCT.match(path):
        return 200, product_page(int(match.group(1)))
    if path.startswith("/flaky/"):
        if n <= int(query.get("fail", "2")):
            return int(query.get("code", "500")), "<h1>oops</h1>"
        return 200, product_page(7)
    if match := re.match(r"^/status/(\d{3})/", path):
        return int(match.group(1)), f"<h1>{match.group(1)}</h1>"
    if path.startswith("/slow/"):
        if n <= int(query.get("times", "1")):
            time.sleep(float(query.get("s", "2")))
        return 200, product_page(3)
    return 404, "<h1>not found</h1>"
