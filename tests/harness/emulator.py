# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The platform emulator (tests/emulator) in a child process, and a client of its control API.

The only place that starts the emulator for the tests, the demo and the benchmark. Standard
library only: the emulator's own Python (.venv/emulator) imports this module too.

Every emulator it starts has its data plane (dataplane.py): a MariaDB and a PostgreSQL server with TLS from
the emulator's CA, started before it and stopped after it; the CA exists even when the API runs on plain
http (``ca_file``, also named by /_emulator/world).
"""

from __future__ import annotations

import json
import os
import re
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

from .dataplane import DataPlane, DataPlaneError, write_certificates

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTS = os.path.join(ROOT, "tests")
# The Python that runs the emulator: EMULATOR_PYTHON, else the virtualenv `make setup-emulator` makes.
EMULATOR_PYTHON = os.environ.get("EMULATOR_PYTHON") or os.path.join(ROOT, ".venv", "emulator", "bin", "python")
# The line the emulator prints once it accepts connections (tests/emulator/__main__.py).
READY = re.compile(r"^emulator ready: .*\bauth_url=(\S+)", re.M)
WRITES = ("POST", "PUT", "PATCH", "DELETE")


class HarnessError(Exception):
    """The harness cannot go on: the emulator or ansible-playbook did not behave."""


class Emulator:
    """The platform emulator in a child process, on a free port (or the one given), and its control API.

    Its output goes to log_path (a temporary file unless given). ``reset_settings`` are settings
    every reset applies again (a reset goes back to the start-up ones): the reliability suite sets
    {"lean": True} there for the test files that run against the lean shapes of real answers.
    """

    reset_settings = {}

    def __init__(self, log_path=None, python=None, host="127.0.0.1", port=0, tls=False, cert_dir=None, lean=False,
                 ready_delay=None, args=()):
        self.python = python or EMULATOR_PYTHON
        self.host = host
        self.port = port
        self.tls = tls
        self.cert_dir = cert_dir or tempfile.mkdtemp(prefix="emulator-tls-")  # the data plane's CA too
        self.lean = lean
        self.ready_delay = ready_delay
        self.args = list(args)
        self.log_path = log_path
        self.process = None
        self.url = None
        self.world = None
        self._context = None
        self.dataplane = None

    # The process ------------------------------------------------------------------------------

    def command(self):
        """The emulator's command line: python -m emulator with this object's options."""
        command = [self.python, "-m", "emulator", "--host", self.host, "--port", str(self.port)]
        if self.ready_delay is not None:
            command += ["--ready-delay", str(self.ready_delay)]
        if self.tls:
            command += ["--tls", "--cert-dir", self.cert_dir]
        if self.lean:
            command.append("--lean")
        if self.dataplane is not None:
            command += ["--dataplane", self.dataplane.config_path]
        return command + self.args

    @staticmethod
    def environment():
        """The environment the emulator runs in: the package tests/emulator importable as `emulator`."""
        return dict(os.environ, PYTHONPATH=TESTS)

    def start(self, timeout=120):
        """Start the emulator and wait until it answers; answer self (its url and world are set)."""
        if not os.path.exists(self.python):
            raise HarnessError("No emulator Python at %s: run `make setup-emulator` or set EMULATOR_PYTHON."
                               % self.python)
        if self.log_path is None:
            handle, self.log_path = tempfile.mkstemp(prefix="emulator-", suffix=".log")
            os.close(handle)
        if self.dataplane is None:
            try:
                write_certificates(self.cert_dir, self.python)
                self.dataplane = DataPlane(self.cert_dir).start()
            except DataPlaneError as error:  # a missing server fails the start with its sentence, never skips
                raise HarnessError(str(error)) from None
        with open(self.log_path, "w", encoding="utf-8") as log:
            self.process = subprocess.Popen(  # pylint: disable=consider-using-with
                self.command(), cwd=ROOT, env=self.environment(), stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = READY.search(self.log())
            if found:
                self.url = found.group(1)
                if self.tls:
                    self._context = ssl.create_default_context(cafile=self.ca)
                self.world = self.control("GET", "/world")
                return self
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise HarnessError("The emulator did not start within %s seconds (%s); the end of its log, %s:\n%s" % (
            timeout, " ".join(self.command()), self.log_path, self.log()[-3000:]))

    def log(self):
        """What the emulator wrote so far."""
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as handle:
                return handle.read()
        except (OSError, TypeError):
            return ""

    def stop(self):
        """Stop the emulator, then its data plane's servers (by their process ids)."""
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.dataplane is not None:
            self.dataplane.stop()
            self.dataplane = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc_info):
        self.stop()

    @property
    def ca(self):
        """The CA that signed the emulator's certificate (with tls)."""
        return os.path.join(self.cert_dir, "ca.pem") if self.tls else None

    @property
    def ca_file(self):
        """The CA of the data plane's servers (and of the emulator's certificate with tls)."""
        return os.path.join(self.cert_dir, "ca.pem")

    @property
    def api_url(self):
        return self.url + "/v1"

    @property
    def auth_url(self):
        return self.url

    # Calls ------------------------------------------------------------------------------------

    def call(self, method, url, body=None, headers=None, form=None, timeout=60):
        """One HTTP call (never through a proxy); the answer's JSON. An error status raises HarnessError."""
        data = json.dumps(body).encode() if body is not None else None
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
        request = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
        if body is not None:
            request.add_header("Content-Type", "application/json")
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}),
                                             urllib.request.HTTPSHandler(context=self._context))
        try:
            with opener.open(request, timeout=timeout) as response:
                content = response.read()
        except urllib.error.HTTPError as error:
            raise HarnessError("%s %s answered %s: %s" % (method, url, error.code, error.read()[:300])) from None
        return json.loads(content) if content else None

    def control(self, method, path, body=None):
        """The control API (/_emulator/...): not logged, not rate-limited, never faulted."""
        return self.call(method, self.url + "/_emulator" + path, body)

    def api(self, method, path, body=None):
        """The resource API with the seeded service token (logged and rate-limited like any request)."""
        token = self.world["service_token"]
        return self.call(method, self.api_url + path, body,
                         headers={"Authorization": "%s:%s" % (token["id"], token["token"])})

    def list(self, path):
        """Every item of a page-based list of the resource API (a lean envelope without next_page
        goes on while its pages come back full)."""
        items, page = [], 1
        while page:
            envelope = self.api("GET", "%s%sper_page=100&page=%d" % (path, "&" if "?" in path else "?", page))
            items += envelope["data"]
            if "next_page" in envelope:
                page = envelope["next_page"]
            else:
                page = page + 1 if len(envelope["data"]) == 100 else None
        return items

    # The control API ----------------------------------------------------------------------------

    def reset(self):
        """Back to the seeded world: state, request log, faults, clock, settings (then reset_settings)."""
        self.control("POST", "/reset")
        if self.reset_settings:
            self.settings(**self.reset_settings)

    def faults(self, *rules):
        self.control("POST", "/faults", dict(rules=list(rules)))

    def clear_faults(self):
        self.control("DELETE", "/faults")

    def settings(self, **values):
        return self.control("POST", "/settings", values)

    def advance(self, seconds):
        """Move the emulator's clock forward."""
        return self.control("POST", "/clock", dict(advance_seconds=seconds))

    def seed(self, **fixtures):
        """Fixtures: databases, teams, team members, passwords, query-pattern reports, service tokens, members,
        webhooks (tests/emulator/README.md)."""
        return self.control("POST", "/seed", fixtures)

    def login(self, connection, *statements):
        """Log in as an application would, with connection details as the collection returns them (host, or
        host:port; port; username; password; database; kind, mysql unless postgresql): PyMySQL or psycopg over
        TLS, the server's certificate and host verified against the data plane's CA. Answers the rows of each
        statement (a list of tuples each); the server's refusal raises (pymysql.MySQLError, psycopg.Error)."""
        host, port = connection["host"], connection.get("port")
        if host.rpartition(":")[2].isdigit():
            host, port = host.rpartition(":")[0], int(host.rpartition(":")[2])
        if connection.get("kind") == "postgresql":
            import psycopg

            with psycopg.connect(host=host, port=port or 5432, user=connection["username"],
                                 password=connection["password"], dbname=connection["database"],
                                 sslmode="verify-full", sslrootcert=self.ca_file, autocommit=True,
                                 connect_timeout=10) as session:
                return [(cursor.fetchall() if cursor.description else [])
                        for cursor in (session.execute(statement) for statement in statements)]
        import pymysql

        session = pymysql.connect(host=host, port=port or 3306, user=connection["username"],
                                  password=connection["password"], database=connection["database"],
                                  ssl_ca=self.ca_file, ssl_verify_cert=True, ssl_verify_identity=True,
                                  autocommit=True, connect_timeout=10)
        rows = []
        with session, session.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)
                rows.append(list(cursor.fetchall()))
        return rows

    def ddl(self, database, branch, statements, organization=None, keyspace=None):
        """Run DDL statements on a branch's schema on the data plane (a keyspace's, when named), in order, as a MySQL
        connection runs them; a statement the server refuses raises HarnessError (HTTP 422, the server's message;
        those before it stay)."""
        body = dict(statements=list(statements))
        if keyspace is not None:
            body["keyspace"] = keyspace
        return self.control("POST", "/branches/%s/%s/%s/ddl" % (organization or self.world["organization"], database,
                                                                branch), body)

    def database_settings(self, database, organization=None, **values):
        """Settings of a database the resource API cannot change yet: require_approval_for_deploy."""
        return self.control("POST", "/databases/%s/%s" % (organization or self.world["organization"], database),
                            values)

    def approve_deletion(self, database, organization=None):
        """Another administrator requests the deletion of a database with a pending deletion request: it goes."""
        organization = organization or self.world["organization"]
        return self.control("POST", "/databases/%s/%s/deletion-approval" % (organization, database))

    def webhook_deliveries(self):
        """Every webhook delivery since the last reset: webhook, database, event, url, at, status, success, result."""
        return self.control("GET", "/webhook-deliveries")

    def requests(self):
        """The request log since the last reset or clear: method, path, status, fault, credential..."""
        return self.control("GET", "/requests")

    def clear_requests(self):
        self.control("DELETE", "/requests")

    def connections(self):
        """{accepted, refused}: connections since the last reset or clear; refused ones (a TLS handshake the
        client gave up) never reach the request log."""
        return self.control("GET", "/connections")

    def writes(self):
        """"METHOD path" of every write in the request log."""
        return ["%s %s" % (r["method"], r["path"]) for r in self.requests() if r["method"] in WRITES]

    def code(self):
        """A fresh authorization code of the seeded OAuth application, as its redirect would carry it."""
        app = self.world["oauth_application"]
        return self.control("POST", "/oauth/authorization-codes",
                            dict(client_id=app["client_id"], redirect_uri=app["redirect_uri"]))["code"]

    def tokens(self):
        """Tokens of the seeded OAuth application, from the token endpoint, outside Ansible."""
        app = self.world["oauth_application"]
        return self.call("POST", self.url + "/oauth/token", form=dict(
            grant_type="authorization_code", code=self.code(), redirect_uri=app["redirect_uri"],
            client_id=app["client_id"], client_secret=app["client_secret"]))

    def secrets(self):
        """The seeded world's secrets: the service tokens and the OAuth application's client secret."""
        world = self.world
        return [world["service_token"]["token"], world["forbidden_service_token"]["token"],
                world["oauth_application"]["client_secret"]]
