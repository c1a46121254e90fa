# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roles and playbooks of the collection, run with ansible-playbook against the platform emulator.

One emulator per test session (per worker under pytest-xdist), reset before every test.
ansible-playbook is taken from beside the Python that runs pytest (make content-tests uses
.venv/new); the emulator runs with .venv/emulator's Python, or CONTENT_EMULATOR_PYTHON.
The collection is the working tree, seen through ansible_collections/planetscale/cloud.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import textwrap
import threading
import time
import urllib.error
import urllib.request

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.path.dirname(sys.executable)
WRITES = ("POST", "PUT", "PATCH", "DELETE")
RECAP = re.compile(r"^localhost\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)\s+skipped=(\d+)"
                   r"\s+rescued=(\d+)\s+ignored=(\d+)", re.M)
RECAP_KEYS = ("ok", "changed", "unreachable", "failed", "skipped", "rescued", "ignored")
# values of secrets the platform issues: passwords, service tokens, OAuth access and refresh tokens
SECRET_SHAPES = re.compile(r"pscale_(pw|tkn|oauth|ref|app_secret)_[A-Za-z0-9]")


class Emulator:
    """The platform emulator in a child process, and its control API."""

    def __init__(self, python, log_path):
        self.python = python
        self.log_path = log_path
        self.process = None
        self.url = None
        self.world = None

    def start(self, timeout=120):
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tests"))
        command = [self.python, "-m", "emulator", "--host", "127.0.0.1", "--port", "0", "--ready-delay", "1"]
        with open(self.log_path, "w", encoding="utf-8") as log:
            self.process = subprocess.Popen(  # pylint: disable=consider-using-with
                command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=log, text=True)
        lines = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in self.process.stdout], daemon=True).start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                found = re.search(r"auth_url=(\S+)", lines.get(timeout=0.5))
            except queue.Empty:
                if self.process.poll() is not None:
                    break
                continue
            if found:
                self.url = found.group(1)
                self.world = self.control("GET", "/world")
                return self
        self.stop()
        raise RuntimeError("The emulator did not start within %ss; see %s." % (timeout, self.log_path))

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    @staticmethod
    def _call(method, url, body=None, headers=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                content = response.read()
        except urllib.error.HTTPError as error:
            raise RuntimeError("%s %s answered %s: %s" % (method, url, error.code, error.read()[:300])) from None
        return json.loads(content) if content else None

    def control(self, method, path, body=None):
        return self._call(method, self.url + "/_emulator" + path, body)

    def api(self, method, path, body=None):
        """A platform API call with the seeded service token (it appears in the request log)."""
        token = self.world["service_token"]
        return self._call(method, self.url + "/v1" + path, body,
                          headers={"Authorization": "%s:%s" % (token["id"], token["token"])})

    def requests(self):
        return self.control("GET", "/requests")

    def writes(self):
        return ["%s %s" % (r["method"], r["path"]) for r in self.requests() if r["method"] in WRITES]

    def clear_requests(self):
        self.control("DELETE", "/requests")

    def code(self):
        """An authorization code of the seeded OAuth application, as its redirect would carry it."""
        app = self.world["oauth_application"]
        return self.control("POST", "/oauth/authorization-codes",
                            dict(client_id=app["client_id"], redirect_uri=app["redirect_uri"]))["code"]

    def secrets(self):
        app = self.world["oauth_application"]
        return [self.world["service_token"]["token"], app["client_secret"]]


class Run:
    """One ansible-playbook run: its exit code, its output and its recap."""

    def __init__(self, args, returncode, output):
        self.args = args
        self.rc = returncode
        self.output = output
        found = RECAP.findall(output)
        self.recap = dict(zip(RECAP_KEYS, (int(n) for n in found[-1]))) if found else {}

    @property
    def changed(self):
        return self.recap.get("changed")

    def __str__(self):
        return "ansible-playbook %s: rc=%s %s\n%s" % (" ".join(self.args), self.rc, self.recap, self.output[-8000:])

    def succeeded(self, changed=None):
        """Assert the run succeeded (with this many changes); return it."""
        if self.rc != 0 or (changed is not None and self.changed != changed):
            raise AssertionError("expected success with changed=%s, got:\n%s" % (changed, self))
        return self

    def failed(self, *messages):
        """Assert the run failed and its output holds each message; return it."""
        missing = [m for m in messages if m not in self.output]
        if self.rc == 0 or missing:
            raise AssertionError("expected a failure saying %r, got:\n%s" % (missing, self))
        return self


class Ansible:
    """ansible-playbook with an isolated configuration, the working tree as planetscale.cloud, and
    the emulator's credentials in the PLANETSCALE_* environment variables."""

    def __init__(self, emulator, home, collections_path):
        self.emulator = emulator
        self.home = home
        self.collections_path = collections_path
        self.runs = []

    def env(self, collections_path=None, oauth_only=False):
        env = dict((k, v) for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "PLANETSCALE_")))
        env.pop("PYTHONPATH", None)
        world = self.emulator.world
        app = world["oauth_application"]
        env.update(
            PATH=BIN + os.pathsep + env.get("PATH", ""),
            ANSIBLE_HOME=os.path.join(self.home, ".ansible"),
            ANSIBLE_LOCAL_TEMP=os.path.join(self.home, ".ansible", "tmp"),
            ANSIBLE_COLLECTIONS_PATH=collections_path or self.collections_path,
            ANSIBLE_COLLECTIONS_SCAN_SYS_PATH="false",
            ANSIBLE_NOCOLOR="1",
            ANSIBLE_LOCALHOST_WARNING="false",
            ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
            ANSIBLE_RETRY_FILES_ENABLED="false",
            PLANETSCALE_API_URL=self.emulator.url + "/v1",
            PLANETSCALE_AUTH_URL=self.emulator.url,
            PLANETSCALE_ORG=world["organization"],
            PLANETSCALE_CLIENT_ID=app["client_id"],
            PLANETSCALE_CLIENT_SECRET=app["client_secret"],
        )
        if not oauth_only:
            env.update(PLANETSCALE_SERVICE_TOKEN_ID=world["service_token"]["id"],
                       PLANETSCALE_SERVICE_TOKEN=world["service_token"]["token"])
        return env

    def playbook(self, playbook, cwd, extra_vars=None, check=False, diff=False, args=(), **env_options):
        """Run a playbook (a path, or a name such as planetscale.cloud.demo) from cwd."""
        command = [os.path.join(BIN, "ansible-playbook"), playbook]
        if extra_vars:
            path = os.path.join(str(cwd), "extra-vars-%d.json" % len(self.runs))
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(extra_vars, handle)
            command += ["-e", "@" + path]
        command += (["--check"] if check else []) + (["--diff"] if diff else []) + list(args)
        done = subprocess.run(command, cwd=str(cwd), env=self.env(**env_options), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=900, check=False)
        run = Run(command[1:], done.returncode, done.stdout)
        self.runs.append(run)
        return run

    def role_play(self, cwd, role, role_vars, name="play.yml", after=""):
        """Write a playbook that includes a role of the collection with these variables; return its path."""
        text = textwrap.dedent("""\
            - name: Run the role {role}
              hosts: localhost
              connection: local
              gather_facts: false
              vars: {vars}
              tasks:
                - name: Include the role
                  ansible.builtin.include_role:
                    name: planetscale.cloud.{role}
            """).format(role=role, vars=json.dumps(role_vars)) + textwrap.indent(textwrap.dedent(after), "    ")
        path = os.path.join(str(cwd), name)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        return path

    def assert_no_secret(self, *secrets):
        """No run of this test showed a secret: the emulator's credentials, the ones given, any issued secret."""
        values = [s for s in list(secrets) + self.emulator.secrets() if s]
        for run in self.runs:
            for value in values:
                assert value not in run.output, "a secret appears in the output of %r" % run
            assert not SECRET_SHAPES.search(run.output), "a secret appears in the output of %r" % run


@pytest.fixture(scope="session")
def emulator(tmp_path_factory):
    python = os.environ.get("CONTENT_EMULATOR_PYTHON", os.path.join(ROOT, ".venv", "emulator", "bin", "python"))
    if not os.path.exists(python):
        pytest.fail("No emulator Python at %s: run `make setup-emulator` or set CONTENT_EMULATOR_PYTHON." % python)
    if not os.path.exists(os.path.join(BIN, "ansible-playbook")):
        pytest.fail("No ansible-playbook beside %s: run the suite with the Python of an Ansible virtualenv." % sys.executable)
    running = Emulator(python, str(tmp_path_factory.mktemp("emulator") / "emulator.log")).start()
    yield running
    running.stop()


@pytest.fixture(scope="session")
def collections_path(tmp_path_factory):
    """A collections path where planetscale.cloud is this working tree."""
    path = tmp_path_factory.mktemp("collections")
    namespace = path / "ansible_collections" / "planetscale"
    namespace.mkdir(parents=True)
    os.symlink(ROOT, str(namespace / "cloud"))
    return str(path)


@pytest.fixture
def ansible(emulator, collections_path, tmp_path):
    """ansible-playbook against a freshly reset emulator; fails the test if any run showed a secret."""
    emulator.control("POST", "/reset")
    runner = Ansible(emulator, str(tmp_path), collections_path)
    yield runner
    runner.assert_no_secret()


def mode(path):
    return oct(os.stat(str(path)).st_mode & 0o777)
