"""A SearXNG stand-in on loopback (the tests', the bench's workload S) speaking its documented
search API (searxng/searxng docs/dev/search_api.rst; the answer's keys as its webutils' JSON
response writes them):
``GET /search?q=…&format=json`` with ``categories``, ``language``, ``time_range``, ``pageno``.
A test says what each query finds (``results[query]``, ten a page as SearXNG pages them);
``format`` other than json is a 403 (as an instance whose settings.yml does not enable it);
a query ``slow`` answers after ``slow_s``, a query ``broken`` is a 500. With ``bearer`` set, a
request without ``Authorization: Bearer <bearer>`` is a 401 (Cloud Run IAM in front of it).
Every request is kept (``asked``, its Authorization header in ``authorizations``). Runs in a
thread of the test process; stopped by ``stop``."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

PAGE = 10


def answer_of(query: str, results: list[dict[str, Any]]) -> dict[str, Any]:
    """SearXNG's JSON answer (every key it writes)."""
    return {
        "query": query,
        "number_of_results": len(results),
        "results": results,
        "answers": [],
        "corrections": [],
        "infoboxes": [],
        "suggestions": [],
        "unresponsive_engines": [],
    }


def result(url: str, title: str, content: str = "", **more: Any) -> dict[str, Any]:
    """One result as SearXNG writes it (its engine's fields beside)."""
    return {
        "url": url,
        "title": title,
        "content": content,
        "engine": "standin",
        "engines": ["standin"],
        "positions": [1],
        "score": 1.0,
        "category": "general",
        "publishedDate": None,
        "thumbnail": "",
        "template": "default.html",
        "parsed_url": [*urlsplit(url), ""],
        **more,
    }


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a caller that gave up on a slow answer closed the connection: nothing to say


class SearxngStandin:
    def __init__(self, slow_s: float = 5.0) -> None:
        self.results: dict[str, list[dict[str, Any]]] = {}
        self.asked: list[dict[str, str]] = []
        self.slow_s = slow_s
        self.json_enabled = True  # False: as an instance whose settings.yml does not enable it
        self.bearer: str | None = None
        self.authorizations: list[str | None] = []
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                params = {k: v[-1] for k, v in parse_qs(parts.query).items()}
                standin.asked.append(params)
                authorization = self.headers.get("Authorization")
                standin.authorizations.append(authorization)
                if standin.bearer is not None and authorization != f"Bearer {standin.bearer}":
                    return self._send(401, None)
                if parts.path != "/search":
                    return self._send(404, {"error": "not found"})
                if params.get("format") != "json" or not standin.json_enabled:
                    return self._send(403, None)
                query = params.get("q", "")
                if query == "broken":
                    return self._send(500, None)
                if query == "slow":
                    time.sleep(standin.slow_s)
                found = standin.results.get(query, [])
                page = int(params.get("pageno", "1"))
                self._send(200, answer_of(query, found[(page - 1) * PAGE : page * PAGE]))

            def _send(self, status: int, body: Any) -> None:
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
