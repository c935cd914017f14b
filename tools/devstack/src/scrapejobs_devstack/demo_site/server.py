"""Serve the demo catalog on loopback from a background thread."""

from __future__ import annotations

import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from scrapejobs_devstack.demo_site.catalog import (
    index_page,
    product_json,
    product_page,
    scripted_product_page,
)

PRODUCT = re.compile(r"^/product/(\d{1,6})$")
SCRIPTED = re.compile(r"^/scripted/(\d{1,6})$")  # built by a script: scrape with render
API = re.compile(r"^/api/product/(\d{1,6})$")


class _Handler(BaseHTTPRequestHandler):
    server_version = "demo-shop/1"

    def do_GET(self) -> None:
        match = PRODUCT.match(self.path)
        if match:
            self._send(200, product_page(int(match.group(1))))
        elif match := SCRIPTED.match(self.path):
            self._send(200, scripted_product_page(int(match.group(1))))
        elif match := API.match(self.path):
            self._send(200, product_json(int(match.group(1))), "application/json")
        elif self.path == "/":
            self._send(200, index_page(20))
        else:
            self._send(404, "<h1>not found</h1>")

    def _send(self, status: int, html: str, content_type: str = "text/html; charset=utf-8") -> None:
        body = html.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


def serve_demo_site(port: int = 0) -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
