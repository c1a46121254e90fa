# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A scripted HTTP server on loopback, so the client is tested through real requests and urllib3."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest


class ScriptedServer:
    """Answers each request with the next scripted (status, body, headers); records what it received."""

    def __init__(self):
        self.script = []
        self.default = (200, {}, {})
        self.requests = []
        self.connections = 0  # TCP connections accepted
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output quiet
                pass

            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                url = urlsplit(self.path)
                server.requests.append(dict(method=self.command, path=url.path, query=parse_qs(url.query),
                                            headers=dict(self.headers), body=body.decode()))
                answer = server.script.pop(0) if server.script else server.default
                if callable(answer):
                    answer = answer(server.requests[-1])
                if answer == "drop":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                status, payload, headers = (tuple(answer) + ({},))[:3]
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                if status != 204:
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if status != 204:
                    self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_DELETE = _answer

        class Counting(ThreadingHTTPServer):
            request_queue_size = 64  # connections made at once wait to be accepted (the default backlog is 5)

            def get_request(self):
                accepted = super().get_request()
                server.connections += 1
                return accepted

        self.httpd = Counting(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs=dict(poll_interval=0.05), daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    scripted = ScriptedServer()
    yield scripted
    scripted.close()


@pytest.fixture
def sleeps(monkeypatch):
    """Record the waits of the retry machinery instead of sleeping; the monotonic clock moves by them."""
    import time

    waited = []
    real_monotonic = time.monotonic
    monkeypatch.setattr(time, "sleep", waited.append)
    monkeypatch.setattr(time, "monotonic", lambda: real_monotonic() + sum(waited))
    return waited
