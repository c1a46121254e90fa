# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the reliability suite drives: the emulator in a child process, ansible-playbook runs
at -vvvv in an isolated configuration, and the secret scan every run's output goes through.

Playbooks are built here as Python data (never kept as YAML files in the tree), run with the
ansible-playbook beside the Python that runs the tests, and parsed into per-task results.
"""

from __future__ import annotations

import json
import os
import queue
import re
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EMULATOR_PYTHON = os.environ.get("RELIABILITY_EMULATOR_PYTHON", os.path.join(ROOT, ".venv", "emulator", "bin", "python"))
LOGS = os.path.join(ROOT, "build", "reliability")

FQCN = "planetscale.cloud."
# Modules that take the resource API's credentials and organization; user_info takes no organization.
ORG_MODULES = ("branch", "branch_info", "password", "password_info", "query_pattern_info", "region_info",
               "team", "team_info", "team_member_info")
MODULES = ORG_MODULES + ("user_info", "token", "token_info")

# Every secret the emulator issues carries one of these prefixes (service tokens, client secrets,
# OAuth access and refresh tokens, password plain texts), so the scan finds secrets no test learned.
ISSUED_SECRET = re.compile(r"pscale_(?:tkn|app_secret|oauth|ref|pw)_[A-Za-z0-9]+")
# The suite names the tasks that return a secret by design and have no no_log, for the reader.
REVEALS = "(returns its secret by design)"
# Where a module returns a secret by design: (result key, key inside it). Only there may one show.
BY_DESIGN = frozenset((("password", "plain_text"), ("connection", "password"), ("token", "access_token"),
                       ("token", "refresh_token"), ("token_record", "token"),
                       ("token_record", "plain_text_refresh_token")))
NO_LOG_MASK = "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"

TASK_HEADER = re.compile(r"^TASK \[(?P<name>.*)\] \**$", re.M)
RESULT_START = re.compile(
    r"^(?P<status>ok|changed|failed|fatal|skipping): \[(?P<host>[^\]]+)\]"
    r"(?: => \(item=(?P<item>.*?)\)| \(item=(?P<failed_item>.*?)\))?(?:: FAILED!)? => \{$", re.M)
RECAP = re.compile(r"^(?P<host>\S+)\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)\s+"
                   r"skipped=(\d+)\s+rescued=(\d+)\s+ignored=(\d+)", re.M)
TRACEBACK = re.compile(r"Traceback \(most recent call last\)|The full traceback is|MODULE FAILURE|module_stderr|"
                       r"\"exception\":")


class HarnessError(Exception):
    """The suite cannot go on: the emulator or ansible-playbook did not behave."""


# The emulator ------------------------------------------------------------------------------------


class Emulator:
    """The platform emulator in a child process (a free port), and its control API.

    ``shapes`` are settings every reset applies again (a reset goes back to the start-up ones):
    conftest.response_shapes sets {"lean": True} for the test files that run against the lean
    shapes of real answers (tests/emulator/README.md, "Lean shapes")."""

    shapes = {}

    def __init__(self, workdir, tls=False, ready_delay=0.5, name=None):
        self.workdir = workdir
        self.name = name or ("tls" if tls else "plain")
        self.tls = tls
        self.ready_delay = ready_delay
        self.cert_dir = os.path.join(workdir, "tls-" + self.name) if tls else None
        self.process = None
        self.url = None
        self.world = None
        self._context = None

    @property
    def ca(self):
        return os.path.join(self.cert_dir, "ca.pem") if self.cert_dir else None

    @property
    def api_url(self):
        return self.url + "/v1"

    def start(self, timeout=60):
        if not os.path.exists(EMULATOR_PYTHON):
            raise HarnessError("No emulator Python at %s: run `make setup-emulator` or set RELIABILITY_EMULATOR_PYTHON."
                               % EMULATOR_PYTHON)
        command = [EMULATOR_PYTHON, "-m", "emulator", "--host", "127.0.0.1", "--port", "0",
                   "--ready-delay", str(self.ready_delay)]
        if self.tls:
            command += ["--tls", "--cert-dir", self.cert_dir]
        log = open(os.path.join(self.workdir, "emulator-%s.log" % self.name), "w",  # pylint: disable=consider-using-with
                   encoding="utf-8")
        self.process = subprocess.Popen(  # pylint: disable=consider-using-with
            command, cwd=ROOT, env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tests")),
            stdout=subprocess.PIPE, stderr=log, text=True)
        log.close()
        lines = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in self.process.stdout], daemon=True).start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=0.2)
            except queue.Empty:
                if self.process.poll() is not None:
                    break
                continue
            found = re.search(r"auth_url=(\S+)", line)
            if found:
                self.url = found.group(1)
                if self.tls:
                    self._context = ssl.create_default_context(cafile=self.ca)
                self.world = self.control("GET", "/world")
                return self
        self.stop()
        raise HarnessError("The emulator did not start within %ss: %s" % (timeout, " ".join(command)))

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    # Calls -------------------------------------------------------------------------------------

    def call(self, method, url, body=None, headers=None, timeout=60):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=timeout, context=self._context) as response:
                content = response.read()
        except urllib.error.HTTPError as error:
            raise HarnessError("%s %s answered %s: %s" % (method, url, error.code, error.read()[:300]))
        return json.loads(content) if content else None

    def control(self, method, path, body=None):
        return self.call(method, self.url + "/_emulator" + path, body)

    def api(self, method, path, body=None):
        """The resource API with the seeded service token (logged and rate-limited like any request)."""
        token = self.world["service_token"]
        return self.call(method, self.api_url + path, body,
                         headers={"Authorization": "%s:%s" % (token["id"], token["token"])})

    def reset(self):
        self.control("POST", "/reset")
        if self.shapes:
            self.settings(**self.shapes)

    def faults(self, *rules):
        self.control("POST", "/faults", dict(rules=list(rules)))

    def settings(self, **values):
        return self.control("POST", "/settings", values)

    def advance(self, seconds):
        return self.control("POST", "/clock", dict(advance_seconds=seconds))

    def requests(self):
        return self.control("GET", "/requests")

    def clear_requests(self):
        self.control("DELETE", "/requests")

    def code(self):
        """A fresh authorization code of the seeded OAuth application."""
        app = self.world["oauth_application"]
        return self.control("POST", "/oauth/authorization-codes",
                            dict(client_id=app["client_id"], redirect_uri=app["redirect_uri"]))["code"]

    def tokens(self):
        """Tokens of the seeded OAuth application, from the token endpoint, outside Ansible."""
        app = self.world["oauth_application"]
        form = urllib.parse.urlencode(dict(grant_type="authorization_code", code=self.code(),
                                           redirect_uri=app["redirect_uri"], client_id=app["client_id"],
                                           client_secret=app["client_secret"])).encode()
        with urllib.request.urlopen(self.url + "/oauth/token", data=form, timeout=60, context=self._context) as answer:
            return json.load(answer)

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

    def state(self):
        """The end state the suite compares: branches, passwords and teams, without ids, times or secrets."""
        org, database = self.world["organization"], self.world["database"]
        base = "/organizations/%s/databases/%s" % (org, database)
        branches = sorted(self.list(base + "/branches"), key=lambda b: b["name"])
        passwords = {}
        for branch in branches:
            found = self.list("%s/branches/%s/passwords" % (base, branch["name"]))
            passwords[branch["name"]] = sorted(
                (p["name"], p["role"], p.get("replica"), p.get("ttl_seconds"), sorted(p.get("cidrs") or []))
                for p in found)
        teams = {}
        for team in self.list("/organizations/%s/teams" % org):
            members = self.list("/organizations/%s/teams/%s/members" % (org, team["slug"]))
            teams[team["slug"]] = dict(name=team["name"], description=team.get("description"),
                                       members=sorted(m["user"]["id"] for m in members))
        return dict(branches=[(b["name"], b.get("parent_branch"), (b.get("region") or {}).get("slug"))
                              for b in branches], passwords=passwords, teams=teams)


# Playbooks -------------------------------------------------------------------------------------


def module_defaults(**connection):
    """module_defaults for every module: the emulator's URLs and credentials, plus connection options.

    Credentials are templated from the variables Ansible.run(emulator=...) passes, never written into
    the playbook: Ansible quotes playbook lines around a failed task, as it would a user's playbook.
    """
    token = dict(service_token_id="{{ world.service_token.id }}", service_token="{{ world.service_token.token }}",
                 api_url="{{ api_url }}")
    defaults = {}
    for name in ORG_MODULES:
        defaults[FQCN + name] = dict(token, organization="{{ world.organization }}", **connection)
    defaults[FQCN + "user_info"] = dict(token, **connection)
    defaults[FQCN + "token"] = dict(auth_url="{{ auth_url }}", client_id="{{ world.oauth_application.client_id }}",
                                    client_secret="{{ world.oauth_application.client_secret }}", **connection)
    defaults[FQCN + "token_info"] = dict(auth_url="{{ auth_url }}", **connection)
    return defaults


def task(title, module, /, register=None, no_log=False, **args):
    """A task of a module of the collection."""
    entry = {"name": title, FQCN + module: args}
    if register:
        entry["register"] = register
    if no_log:
        entry["no_log"] = True
    return entry


def play(tasks, hosts="localhost", defaults=None, **keywords):
    return dict(dict(name=keywords.pop("name", "reliability"), hosts=hosts, gather_facts=False,
                     module_defaults=defaults or {}, tasks=list(tasks)), **keywords)


class TaskResult:
    def __init__(self, name, host, status, result, item=None):
        self.name = name
        self.host = host
        self.status = status
        self.result = result
        self.item = item

    @property
    def failed(self):
        return self.status in ("failed", "fatal") or bool(self.result.get("failed"))

    @property
    def changed(self):
        return self.status == "changed" or bool(self.result.get("changed"))

    def __repr__(self):
        return "<%s [%s] %s: %s>" % (self.name, self.host, self.status, json.dumps(self.result)[:400])


class Run:
    """One ansible-playbook run: its output, and each task's printed result per host."""

    def __init__(self, label, command, output, rc, elapsed, log_path):
        self.label = label
        self.command = command
        self.output = output
        self.rc = rc
        self.elapsed = elapsed
        self.log_path = log_path
        self.tasks = []
        self.seconds = {}  # task name -> host -> seconds it took
        self.spans = []  # (start, end, TaskResult): where each result's JSON is in the output
        self._parse()

    def _parse(self):
        headers = list(TASK_HEADER.finditer(self.output))
        for index, header in enumerate(headers):
            end = headers[index + 1].start() if index + 1 < len(headers) else len(self.output)
            block_start = header.end()
            for start in RESULT_START.finditer(self.output, block_start, end):
                brace = start.end() - 1
                close = self.output.find("\n}\n", brace, end + 2)
                if close < 0:
                    close = self.output.find("\n}", brace)
                text = self.output[brace:close + 2]
                try:
                    result = json.loads(text)
                except ValueError as error:
                    raise HarnessError("Unparsable result of task %r in %s: %s" % (header.group("name"),
                                                                                   self.log_path, error))
                task = TaskResult(header.group("name"), start.group("host"), start.group("status"), result,
                                  start.group("item") or start.group("failed_item"))
                self.tasks.append(task)
                self.spans.append((brace, close + 2, task))

    def block(self, name):
        """The output of the task (or tasks) of that name: its header to the next task's."""
        headers = list(TASK_HEADER.finditer(self.output))
        return "".join(self.output[h.start():(headers[i + 1].start() if i + 1 < len(headers) else len(self.output))]
                       for i, h in enumerate(headers) if h.group("name") == name)

    def results(self, name):
        return [task for task in self.tasks if task.name == name]

    def result(self, name, host="localhost"):
        found = [task for task in self.tasks if task.name == name and task.host == host]
        if len(found) != 1:
            raise AssertionError("%d results of task %r on %s in %s" % (len(found), name, host, self.log_path))
        return found[0]

    def failures(self):
        return [task for task in self.tasks if task.failed]

    @property
    def recap(self):
        fields = ("ok", "changed", "unreachable", "failed", "skipped", "rescued", "ignored")
        return dict((m.group("host"), dict(zip(fields, map(int, m.groups()[1:]))))
                    for m in RECAP.finditer(self.output))

    def tracebacks(self):
        return TRACEBACK.findall(self.output)

    def assert_ok(self):
        failed = self.failures()
        assert self.rc == 0 and not failed, "%s failed (rc %s, log %s): %s\n%s" % (
            self.label, self.rc, self.log_path, failed[:3], self.output[-3000:])
        return self


class Ansible:
    """Runs playbooks with ansible-playbook at -vvvv in an isolated Ansible configuration.

    Every run's output is kept under build/reliability/ and handed to the secret watch.
    """

    def __init__(self, workdir, watch, python=None):
        self.workdir = workdir
        self.watch = watch
        self.python = python or sys.executable
        self.ansible_playbook = os.path.join(os.path.dirname(self.python), "ansible-playbook")
        if not os.path.exists(self.ansible_playbook):
            raise HarnessError("No ansible-playbook beside %s: run the suite with a Python that has ansible-core."
                               % self.python)
        self.collections_path = os.path.join(workdir, "collections")
        collections = os.path.join(self.collections_path, "ansible_collections", "planetscale")
        os.makedirs(collections, exist_ok=True)
        if not os.path.lexists(os.path.join(collections, "cloud")):
            os.symlink(ROOT, os.path.join(collections, "cloud"))
        self.config = os.path.join(workdir, "ansible.cfg")
        with open(self.config, "w", encoding="utf-8") as handle:
            handle.write("[defaults]\ncollections_path = %s\ncollections_scan_sys_path = false\n"
                         "retry_files_enabled = false\nnocolor = true\nlocal_tmp = %s\nremote_tmp = %s\n"
                         "interpreter_python = %s\ncallback_plugins = %s\ncallbacks_enabled = reliability_timer\n" % (
                             os.path.join(workdir, "collections"), os.path.join(workdir, "local-tmp"),
                             os.path.join(workdir, "remote-tmp"), self.python, os.path.join(HERE, "callback_plugins")))
        self.count = 0
        os.makedirs(LOGS, exist_ok=True)

    def env(self, extra=None):
        env = dict((k, v) for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "PLANETSCALE_")))
        env.update(ANSIBLE_CONFIG=self.config, ANSIBLE_HOME=os.path.join(self.workdir, "home"), PYTHONHASHSEED="0",
                   PATH=os.pathsep.join((os.path.dirname(self.ansible_playbook), env.get("PATH", ""))))
        env.update(extra or {})
        return env

    def run(self, label, plays, extra_vars=None, emulator=None, hosts=("localhost",), forks=5, in_process=True,
            check=False, diff=False, env=None, timeout=600, verbosity=4):
        """Run plays (a list of play dicts, or a playbook's YAML text) once; return the parsed Run.
        Never raises on a failed playbook.

        With emulator, the variables module_defaults() refers to are passed: world, api_url, auth_url.
        """
        if emulator is not None:
            extra_vars = dict(dict(world=emulator.world, api_url=emulator.api_url, auth_url=emulator.url),
                              **(extra_vars or {}))
        self.count += 1
        slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")[:80]
        base = os.path.join(self.workdir, "%03d-%s" % (self.count, slug))
        with open(base + ".yml", "w", encoding="utf-8") as handle:
            if isinstance(plays, str):
                handle.write(plays)
            else:
                yaml.safe_dump(plays, handle, sort_keys=False, width=1000)
        with open(base + ".json", "w", encoding="utf-8") as handle:
            json.dump(dict(extra_vars or {}, planetscale_in_process=in_process), handle)
        with open(base + ".ini", "w", encoding="utf-8") as handle:
            handle.write("".join("%s ansible_connection=local\n" % host for host in hosts))
        command = [self.ansible_playbook, "-i", base + ".ini", base + ".yml", "-e", "@" + base + ".json",
                   "--forks", str(forks)]
        if verbosity:
            command.append("-" + "v" * verbosity)
        if check:
            command.append("--check")
        if diff:
            command.append("--diff")
        timings = base + ".timings.json"
        start = time.monotonic()
        try:
            completed = subprocess.run(command, cwd=self.workdir, env=self.env(dict(env or {}, RELIABILITY_TIMINGS=timings)), stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired as expired:
            raise HarnessError("%s did not end within %s seconds (a hang):\n%s" % (
                label, timeout, (expired.output or "")[-3000:] if isinstance(expired.output, str) else ""))
        elapsed = time.monotonic() - start
        log_path = os.path.join(LOGS, "%s-%s.log" % (os.environ.get("PYTEST_XDIST_WORKER", "main"),
                                                     os.path.basename(base)))
        with open(log_path, "w", encoding="utf-8") as handle:
            handle.write("$ %s\n\n%s\n# exit %s after %.1f seconds\n"
                         % (" ".join(command), completed.stdout, completed.returncode, elapsed))
        run = Run(label, command, completed.stdout, completed.returncode, elapsed, log_path)
        if os.path.exists(timings):
            with open(timings, encoding="utf-8") as handle:
                run.seconds = json.load(handle)
        self.watch.check(run)
        return run


# Secrets ---------------------------------------------------------------------------------------


class SecretWatch:
    """Every run's output is searched for every secret: those the emulator issued (by their
    prefixes) and those the tests passed or learned (by value). A secret may show only in the
    printed result of a task (so one without no_log), at a key in BY_DESIGN, where a module
    returns it by design; anywhere else (a message, a warning, an invocation, a debug task,
    Ansible's own lines) it is a leak.
    """

    def __init__(self):
        self.known = set()
        self.runs = []
        self.leaks = []
        self.tracebacks = []  # (log, what) of every run that showed one: never expected, in any test
        self.shown_by_design = 0
        self._seen = set()  # (log, position) of every occurrence judged

    def learn(self, *values):
        """Add secrets (strings of 8 characters or more); earlier runs are searched again for them."""
        new = set(value for value in values if isinstance(value, str) and len(value) >= 8) - self.known
        if not new:
            return
        self.known |= new
        for run in self.runs:
            self._search(run, new)

    def learn_from(self, value):
        """Learn every string at a secret-looking key of a nested result."""
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, str) and key in ("plain_text", "password", "access_token", "refresh_token",
                                                     "client_secret", "service_token", "token", "code",
                                                     "plain_text_refresh_token"):
                    self.learn(item)
                else:
                    self.learn_from(item)
        elif isinstance(value, list):
            for item in value:
                self.learn_from(item)

    def check(self, run):
        self.runs.append(run)
        self._search(run, None)
        self.tracebacks += [(run.log_path, found) for found in run.tracebacks()]

    def _search(self, run, values):
        output = run.output
        found = []
        for value in (values if values is not None else self.known):
            start = output.find(value)
            while start >= 0:
                found.append((start, value))
                start = output.find(value, start + 1)
        if values is None:
            found += [(match.start(), match.group(0)) for match in ISSUED_SECRET.finditer(output)]
        for position, value in sorted(set(found)):
            if (run.log_path, position) in self._seen:
                continue
            self._seen.add((run.log_path, position))
            reason = self._disallowed(run, position, value)
            if reason:
                line = output.count("\n", 0, position) + 1
                self.leaks.append("%s (%s, line %d): %s...%s" % (reason, run.log_path, line, value[:14], value[-4:]))
            else:
                self.shown_by_design += 1

    @staticmethod
    def _disallowed(run, position, value):
        """None where the secret shows by design, else why it must not show there."""
        for start, end, task in run.spans:
            if start <= position < end:
                if task.status == "skipping" or not _by_design(task.result, value):
                    return "in the result of task %r, not where a module returns a secret by design" % task.name
                return None
        return "outside any task result"


def _by_design(result, value):
    """Whether value shows in result only at the keys that return secrets by design."""
    places = []

    def walk(node, trail):
        if isinstance(node, dict):
            for key, item in node.items():
                walk(item, trail + (key,))
        elif isinstance(node, list):
            for item in node:
                walk(item, trail)
        elif isinstance(node, str) and value in node:
            places.append(trail)

    walk(result, ())
    return bool(places) and all(len(trail) == 2 and trail in BY_DESIGN and result[trail[0]][trail[1]] == value
                                for trail in places)
