# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A scripted HTTP server on loopback, so the client is tested through real requests and urllib3, and the
runner of a module's class against it (the `run` fixture of the tests of tests/unit/plugins/modules)."""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
from ansible.module_utils.common.arg_spec import ModuleArgumentSpecValidator

from ansible_collections.planetscale.cloud.plugins.module_utils.base import TaskContext


class ScriptedServer:
    """Answers each request with the next scripted (status, body, headers); records what it received.

    A body is JSON, or bytes as they are, or an iterator of bytes: sent chunked, chunk by chunk, for as long
    as it yields (an answer that never ends), or as they come under the Content-Length the headers give."""

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
                if hasattr(payload, "__next__"):  # an iterator of bytes: a chunked body, as long as it goes on
                    self._stream(status, payload, headers)
                    return
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

            def _stream(self, status, chunks, headers):
                self.send_response(status)
                for key, value in dict({"Content-Type": "application/json"}, **headers).items():
                    self.send_header(key, value)
                framed = "Content-Length" not in headers
                if framed:
                    self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for chunk in chunks:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if framed else chunk)
                        self.wfile.flush()
                    if framed:
                        self.wfile.write(b"0\r\n\r\n")
                except OSError:  # the client stopped reading
                    self.close_connection = True

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _answer

        class Counting(ThreadingHTTPServer):
            request_queue_size = 64  # connections made at once wait to be accepted (the default backlog is 5)

            def handle_error(self, request, client_address):
                if not isinstance(sys.exc_info()[1], ConnectionError):  # a client that stopped reading: no news
                    super().handle_error(request, client_address)

            def get_request(self):
                accepted = super().get_request()
                server.connections += 1
                return accepted

        self.httpd = Counting(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs=dict(poll_interval=0.005), daemon=True)
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


class ModuleRunner:
    """Runs a module's class as a task would: its arguments validated against the module's spec, then execute().

    The arguments are the test file's ARGS, then the test's own. None given for an argument of ARGS leaves it
    out of the task, as `omit` would; None for any other argument is the null a task may give. api_retries is 0
    unless a test says otherwise.
    """

    def __init__(self, module_class, defaults):
        self.module_class = module_class
        self.defaults = dict(dict(api_retries=0), **defaults)

    def validate(self, **args):
        """The validation of these arguments (the file's ARGS, then args), as Ansible validates a task's."""
        args = dict((name, value) for name, value in dict(self.defaults, **args).items()
                    if value is not None or name not in self.defaults)
        spec = self.module_class.spec()
        spec.pop("supports_check_mode")
        return ModuleArgumentSpecValidator(**spec).validate(args)

    def params(self, **args):
        """The validated parameters of valid arguments, as the module's class takes them."""
        validation = self.validate(**args)
        assert not validation.error_messages, validation.error_messages
        return validation.validated_parameters

    def __call__(self, check_mode=False, diff=False, ctx=None, **args):
        """The module's result; ctx (a TaskContext) collects its warnings, when the test reads them."""
        return self.module_class(self.params(**args), ctx or TaskContext(check_mode=check_mode, diff=diff)).execute()


@pytest.fixture
def run(request, server):
    """The runner of the module class a test file names in MODULE, with the arguments of its ARGS.

    The scripted server's URL is the module's auth_url when the module takes one (the OAuth modules),
    its api_url otherwise. run(**args) returns the result; run.validate(**args) only validates;
    run.params(**args) returns the validated parameters.
    """
    module_class = request.module.MODULE
    url = dict(auth_url=server.url) if "auth_url" in module_class.taken_options() else dict(api_url=server.url + "/v1")
    return ModuleRunner(module_class, dict(url, **request.module.ARGS))
