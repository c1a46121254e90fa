# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark: the collection against the same outcome written by hand with ansible.builtin.uri.

Starts the emulator on a free port, and for each scenario prepares the emulator's state
(reset, fixtures), runs the collection's playbook (in-process, then through the ordinary
module path) and the hand-written uri playbook with ansible-playbook several times, and
records the wall time (median), the CPU time of ansible-playbook and its workers, the HTTP
requests the emulator served and the task runs. Writes docs/benchmarks.md and
docs/benchmarks.png and prints the table.

    python tests/bench/run.py                 # the full benchmark (make bench)
    python tests/bench/run.py --runs 1 --slow-runs 1 --scenarios noop,list --no-write

Run it with the Python of a virtualenv that has ansible-core (and matplotlib for the
chart): ansible-playbook is taken from beside that Python.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import queue
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PLAYBOOKS = os.path.join(HERE, "playbooks")

READY_DELAY = 1.0  # seconds until a new branch is ready, the same for both sides
PAGE_SIZE = 100
DESCRIPTION = "Owned by the benchmark"
PASSWORD_NAME = "app"

# repeats: tasks of the one-request and debug playbooks (they have 50; fewer runs the first ones)
FULL = dict(teams=40, passwords=40, branches=10, members=5000, repeats=50)
SMOKE = dict(teams=2, passwords=2, branches=1, members=250, repeats=3)

# One line of the default callback per task run (a loop item counts as a run; a retry too).
RUN_LINE = re.compile(r"^(?:(?:ok|changed|fatal|failed): \[|FAILED - RETRYING: )", re.M)
RECAP = re.compile(r"^\S+\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)\s+skipped=(\d+)", re.M)

VARIANTS = ("in_process", "module", "uri")
VARIANT_LABELS = dict(in_process="collection, in-process", module="collection, module path", uri="ansible.builtin.uri")


class BenchError(Exception):
    """The benchmark cannot go on: a playbook failed, or the emulator did not answer."""


# The emulator ---------------------------------------------------------------------------------


class Emulator:
    """The platform emulator in a child process, and its control API."""

    def __init__(self, python, port=0, ready_delay=READY_DELAY, log_path=None):
        self.python = python
        self.port = port
        self.ready_delay = ready_delay
        self.log_path = log_path
        self.process = None
        self.url = None
        self.world = None

    def start(self, timeout=120):
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tests"))
        log = open(self.log_path or os.devnull, "w", encoding="utf-8")  # pylint: disable=consider-using-with
        command = [self.python, "-m", "emulator", "--host", "127.0.0.1", "--port", str(self.port),
                   "--ready-delay", str(self.ready_delay)]
        self.process = subprocess.Popen(  # pylint: disable=consider-using-with
            command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=log, text=True)
        log.close()
        lines = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in self.process.stdout], daemon=True).start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=0.5)
            except queue.Empty:
                if self.process.poll() is not None:
                    break
                continue
            found = re.search(r"auth_url=(\S+)", line)
            if found:
                self.url = found.group(1)
                self.world = self.control("GET", "/world")
                return self
        self.stop()
        raise BenchError("The emulator did not start within %ss (%s)." % (timeout, " ".join(command)))

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def _call(self, method, url, body=None, headers=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                content = response.read()
        except urllib.error.HTTPError as error:
            raise BenchError("%s %s answered %s: %s" % (method, url, error.code, error.read()[:300]))
        return json.loads(content) if content else None

    def control(self, method, path, body=None):
        return self._call(method, self.url + "/_emulator" + path, body)

    def api(self, method, path, body=None):
        """A call to the platform API with the seeded service token (logged like any request)."""
        token = self.world["service_token"]
        return self._call(method, self.url + "/v1" + path, body,
                          headers={"Authorization": "%s:%s" % (token["id"], token["token"])})

    def reset(self):
        self.control("POST", "/reset")

    def seed(self, **fixtures):
        return self.control("POST", "/seed", fixtures)

    def requests(self):
        return self.control("GET", "/requests")

    def clear_requests(self):
        self.control("DELETE", "/requests")

    def base_vars(self):
        world = self.world
        return dict(bench_api_url=self.url + "/v1", bench_organization=world["organization"],
                    bench_database=world["database"], bench_branch=world["branch"],
                    bench_service_token_id=world["service_token"]["id"],
                    bench_service_token=world["service_token"]["token"])


# The scenarios ---------------------------------------------------------------------------------


class Scenario:
    """One outcome, reached by a collection playbook and by a uri playbook.

    prepare() puts the emulator in the starting state and answers the playbooks' variables;
    expected() is what a run must cost: the requests by method and the task runs; check()
    verifies the end state after a run.
    """

    key = None
    number = None

    def __init__(self, sizes):
        self.sizes = sizes

    @property
    def title(self):
        raise NotImplementedError

    def playbook(self, variant):
        return os.path.join(PLAYBOOKS, "%s.%s.yml" % (self.key, "uri" if variant == "uri" else "collection"))

    def prepare(self, emulator):
        raise NotImplementedError

    def expected(self, variant):
        """Expected(requests by method, task runs) of a run; the collection's is the minimum a correct module can do."""
        raise NotImplementedError

    def check(self, emulator, run):
        """Raise BenchError when the run did not reach the scenario's end state."""


class Expected:
    """The requests (by method) and task runs of a run; polls add up to `polls` more GETs (and retries)."""

    def __init__(self, requests, task_runs, polls=0):
        self.requests = Counter(requests)
        self.task_runs = task_runs
        self.polls = polls

    @property
    def total(self):
        return sum(self.requests.values())

    def problems(self, methods, task_runs, retries_count=False):
        """What differs from a run's requests and task runs, as sentences (none when it matches)."""
        found = []
        methods = Counter(methods)
        for method in sorted(set(methods) | set(self.requests)):
            want, got = self.requests[method], methods[method]
            slack = self.polls if method == "GET" else 0
            if not want <= got <= want + slack:
                found.append("%s requests: %d, expected %d%s" % (method, got, want, " to %d" % (want + slack) if slack else ""))
        slack = self.polls if retries_count else 0
        if not self.task_runs <= task_runs <= self.task_runs + slack:
            upto = " to %d" % (self.task_runs + slack) if slack else ""
            found.append("task runs: %d, expected %d%s" % (task_runs, self.task_runs, upto))
        return found


class NoOp(Scenario):
    key, number = "noop", 1

    @property
    def title(self):
        return "no-op: %(teams)d teams + %(passwords)d passwords that already match" % self.sizes

    def prepare(self, emulator):
        emulator.reset()
        created = emulator.seed(teams=dict(count=self.sizes["teams"], prefix="bench"),
                                passwords=dict(count=self.sizes["passwords"], prefix="bench", role="reader"))
        for slug in created["teams"]:
            emulator.api("PATCH", "/organizations/%s/teams/%s" % (emulator.world["organization"], slug),
                         dict(description=DESCRIPTION))
        return dict(bench_teams=created["teams"], bench_description=DESCRIPTION,
                    bench_passwords=["bench-%d" % n for n in range(1, self.sizes["passwords"] + 1)])

    def expected(self, variant):
        # one read per resource: the team by its slug, the password by a lookup of its name
        count = self.sizes["teams"] + self.sizes["passwords"]
        return Expected(dict(GET=count), count)

    def check(self, emulator, run):
        if run["changed"] != 0:
            raise BenchError("The no-op run reported %s changes." % run["changed"])


class Update(Scenario):
    key, number = "update", 2

    @property
    def title(self):
        return "update: %(teams)d team descriptions" % self.sizes

    def prepare(self, emulator):
        emulator.reset()
        created = emulator.seed(teams=dict(count=self.sizes["teams"], prefix="bench"))
        return dict(bench_teams=created["teams"], bench_description=DESCRIPTION)

    def expected(self, variant):
        count = self.sizes["teams"]
        return Expected(dict(GET=count, PATCH=count), count if variant != "uri" else 2 * count)

    def check(self, emulator, run):
        teams = emulator.api("GET", "/organizations/%s/teams?per_page=100" % emulator.world["organization"])
        stale = [t["slug"] for t in teams["data"] if t["slug"].startswith("bench-") and t["description"] != DESCRIPTION]
        if stale or not run["changed"]:
            raise BenchError("Teams not updated: %s" % ", ".join(stale))


class Create(Scenario):
    key, number = "create", 3

    @property
    def title(self):
        return "create: %(branches)d branches (waiting until ready) + a password on each" % self.sizes

    def names(self):
        return ["bench-%d" % n for n in range(1, self.sizes["branches"] + 1)]

    def prepare(self, emulator):
        emulator.reset()
        return dict(bench_branches=self.names(), bench_password_name=PASSWORD_NAME)

    def expected(self, variant):
        # per branch: read + create, one read when waiting (more while it is not ready), the password's lookup
        # + create; the collection in three tasks, uri in five. The collection reads the password's name once more
        # after creating it: a parallel run may have made the same password, and the older one is kept.
        count = self.sizes["branches"]
        gets = (3 if variant == "uri" else 4) * count
        return Expected(dict(GET=gets, POST=2 * count), (5 if variant == "uri" else 3) * count, polls=3 * count)

    def check(self, emulator, run):
        database = "/organizations/%s/databases/%s/branches/" % (emulator.world["organization"], emulator.world["database"])
        for name in self.names():
            branch = emulator.api("GET", database + name)
            passwords = emulator.api("GET", database + name + "/passwords?per_page=100")["data"]
            if not branch["ready"] or [p["name"] for p in passwords] != [PASSWORD_NAME]:
                raise BenchError("Branch %s: ready %s, passwords %s" % (name, branch["ready"], passwords))


class List(Scenario):
    key, number = "list", 4

    @property
    def title(self):
        return "list: a team of {:,} members, all of them".format(self.sizes["members"])

    def prepare(self, emulator):
        emulator.reset()
        created = emulator.seed(teams=dict(count=1, prefix="bench-large"))
        emulator.seed(team_members=dict(team=created["teams"][0], count=self.sizes["members"]))
        return dict(bench_large_team=created["teams"][0])

    def expected(self, variant):
        pages = int(math.ceil(self.sizes["members"] / float(PAGE_SIZE)))
        # uri: the first page, a loop over the others, a set_fact that joins them
        return Expected(dict(GET=pages), pages + 1 if variant == "uri" else 1)


class OneRequest(Scenario):
    key, number = "one_request", 5

    @property
    def title(self):
        return "one request: user_info vs one uri GET, %(repeats)d tasks" % self.sizes

    def prepare(self, emulator):
        emulator.reset()
        return {}

    def expected(self, variant):
        return Expected(dict(GET=self.sizes["repeats"]), self.sizes["repeats"])


SCENARIOS = (NoOp, Update, Create, List, OneRequest)
FLOOR_PLAYBOOKS = dict(empty="startup.empty.yml", debug="floor.debug.yml")
TRUNCATED = ("one_request.collection.yml", "one_request.uri.yml", "floor.debug.yml")


# Running ansible-playbook ------------------------------------------------------------------------


class Runner:
    """Runs playbooks with ansible-playbook in an isolated Ansible configuration."""

    def __init__(self, workdir, ansible_playbook=None, python=None):
        self.workdir = workdir
        self.python = python or sys.executable
        self.ansible_playbook = ansible_playbook or os.path.join(os.path.dirname(self.python), "ansible-playbook")
        if not os.path.exists(self.ansible_playbook):
            raise BenchError("No ansible-playbook beside %s; run the benchmark with a Python that has ansible-core."
                             % self.python)
        collections = os.path.join(workdir, "collections", "ansible_collections", "planetscale")
        os.makedirs(collections)
        os.symlink(ROOT, os.path.join(collections, "cloud"))
        self.inventory = os.path.join(workdir, "inventory.ini")
        with open(self.inventory, "w", encoding="utf-8") as handle:
            handle.write("localhost ansible_connection=local ansible_python_interpreter=%s\n" % self.python)
        self.config = os.path.join(workdir, "ansible.cfg")
        with open(self.config, "w", encoding="utf-8") as handle:
            handle.write("[defaults]\ncollections_path = %s\nretry_files_enabled = false\nnocolor = true\n"
                         "local_tmp = %s\nremote_tmp = %s\n" % (
                             os.path.join(workdir, "collections"), os.path.join(workdir, "local-tmp"),
                             os.path.join(workdir, "remote-tmp")))

    def env(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
        env.update(ANSIBLE_CONFIG=self.config, ANSIBLE_HOME=os.path.join(self.workdir, "home"), PYTHONHASHSEED="0")
        return env

    def run(self, playbook, extra_vars, in_process=True, verbosity=0, prefix=()):
        """Run a playbook once: wall and CPU seconds, task runs, changes, output."""
        vars_file = os.path.join(self.workdir, "vars.json")
        with open(vars_file, "w", encoding="utf-8") as handle:
            json.dump(dict(extra_vars, planetscale_in_process=in_process), handle)
        command = list(prefix) + [self.ansible_playbook, "-i", self.inventory, playbook, "-e", "@" + vars_file]
        if verbosity:
            command.append("-" + "v" * verbosity)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        completed = subprocess.run(command, cwd=self.workdir, env=self.env(), stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, check=False)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        output = completed.stdout
        if completed.returncode != 0:
            raise BenchError("%s failed (exit %s):\n%s" % (
                os.path.basename(playbook), completed.returncode, output[-4000:]))
        recap = RECAP.search(output)
        return dict(wall=wall, cpu=(after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
                    task_runs=len(RUN_LINE.findall(output)), changed=int(recap.group(2)) if recap else None,
                    output=output)


# The benchmark -----------------------------------------------------------------------------------


class Bench:
    """Prepare, run and record every scenario.

    The first round measures each scenario as: the floor (an empty play, then debug), the
    collection in-process, uri, in-process again, the module path, in-process again; so the
    quick runs are spread over the whole time of the slow ones, and a change of load hits
    every variant. Later rounds repeat the in-process variant and the floor up to `runs` times
    and the slow variants up to `slow_runs` times, while the time budget allows (a run is only
    started when its first duration still fits).
    """

    def __init__(self, emulator, runner, sizes=None, scenarios=None, variants=VARIANTS, runs=5, slow_runs=3,
                 budget=None, floor=True, log=print):
        self.emulator = emulator
        self.runner = runner
        self.sizes = dict(sizes or FULL)
        self.scenarios = [cls(self.sizes) for cls in SCENARIOS if scenarios is None or cls.key in scenarios]
        self.variants = tuple(variants)
        self.runs = runs
        self.slow_runs = slow_runs
        self.budget = budget
        self.floor = floor
        self.log = log
        self.results = {}  # (scenario key, variant) -> list of runs
        self.loads = []
        self.started = None

    def first_round(self):
        """(key, job) in the order of the first round."""
        jobs = []
        for scenario in self.scenarios:
            if self.floor:
                jobs += [(("floor", name), (lambda name=name: self.measure_floor(name))) for name in FLOOR_PLAYBOOKS]
            order = [v for v in ("in_process", "uri", "in_process", "module", "in_process") if v in self.variants]
            jobs += [((scenario.key, v), (lambda s=scenario, v=v: self.measure(s, v))) for v in order]
        return jobs

    def wanted(self, key):
        return self.runs if key[0] == "floor" or key[1] == "in_process" else self.slow_runs

    def run(self):
        self.started = time.monotonic()
        jobs = self.first_round()
        for key, job in jobs:
            if len(self.results.get(key, ())) < self.wanted(key):
                job()
        self.log("first round done after %.0fs, load %s" % (time.monotonic() - self.started, _loads()))
        repeats = dict(jobs)  # one job per key, in first-round order
        while True:
            due = [(key, job) for key, job in repeats.items() if len(self.results[key]) < self.wanted(key) and self.fits(key)]
            if not due:
                break
            for key, job in due:
                if self.fits(key):
                    job()
            self.log("repeats after %.0fs, load %s" % (time.monotonic() - self.started, _loads()))
        return self.results

    def fits(self, key):
        if self.budget is None:
            return True
        left = self.budget - (time.monotonic() - self.started)
        return self.results[key][0]["wall"] * 1.2 + 1 < left

    def playbook(self, path):
        """The playbook, or a copy of it in the work directory with its first sizes["repeats"] tasks."""
        if not path.endswith(TRUNCATED):
            return path
        with open(path, encoding="utf-8") as handle:
            plays = yaml.safe_load(handle)
        if len(plays[0]["tasks"]) <= self.sizes["repeats"]:
            return path
        plays[0]["tasks"] = plays[0]["tasks"][:self.sizes["repeats"]]
        copy = os.path.join(self.runner.workdir, os.path.basename(path))
        with open(copy, "w", encoding="utf-8") as handle:
            yaml.safe_dump(plays, handle)
        return copy

    def measure_floor(self, name):
        self.emulator.reset()
        run = self.runner.run(self.playbook(os.path.join(PLAYBOOKS, FLOOR_PLAYBOOKS[name])), self.emulator.base_vars())
        self.record(("floor", name), run, Counter())

    def measure(self, scenario, variant):
        extra_vars = dict(self.emulator.base_vars(), **scenario.prepare(self.emulator))
        self.emulator.clear_requests()
        run = self.runner.run(self.playbook(scenario.playbook(variant)), extra_vars, in_process=(variant != "module"))
        methods = Counter(r["method"] for r in self.emulator.requests())
        scenario.check(self.emulator, run)
        run = self.record((scenario.key, variant), run, methods)
        run["problems"] = scenario.expected(variant).problems(methods, run["task_runs"], retries_count=variant == "uri")
        if run["problems"]:
            self.log("  %s/%s is not as expected: %s" % (scenario.key, variant, "; ".join(run["problems"])))
        return run

    def record(self, key, run, methods):
        self.loads.append(os.getloadavg()[0])
        run = dict(run, requests=sum(methods.values()), methods=dict(methods))
        del run["output"]
        self.results.setdefault(key, []).append(run)
        self.log("  %-12s %-10s %7.2fs wall %7.2fs cpu %5d requests %4d task runs" % (
            key[0], key[1], run["wall"], run["cpu"], run["requests"], run["task_runs"]))
        return run

    # Summaries ---------------------------------------------------------------------------------

    def median(self, key, field="wall"):
        runs = self.results.get(key)
        return statistics.median(run[field] for run in runs) if runs else None

    def last(self, key, field):
        runs = self.results.get(key)
        return runs[-1][field] if runs else None

    def per_task(self, key):
        """Seconds per task of a one-request or debug playbook, less the fixed cost of a run (the empty play)."""
        total, empty = self.median(key), self.median(("floor", "empty"))
        return None if total is None or empty is None else (total - empty) / self.sizes["repeats"]

    def rows(self):
        rows = []
        for scenario in self.scenarios:
            key = scenario.key
            expected = scenario.expected("in_process")
            row = dict(number=scenario.number, key=key, title=scenario.title, minimum=expected.total,
                       exact=not expected.polls)
            for variant in self.variants:
                row[variant] = dict(wall=self.median((key, variant)), cpu=self.median((key, variant), "cpu"),
                                    requests=self.last((key, variant), "requests"),
                                    methods=self.last((key, variant), "methods"),
                                    task_runs=self.last((key, variant), "task_runs"),
                                    runs=len(self.results.get((key, variant), ())))
            row["ratio"] = _ratio(row.get("in_process", {}).get("wall"), row.get("uri", {}).get("wall"))
            row["module_ratio"] = _ratio(row.get("module", {}).get("wall"), row.get("uri", {}).get("wall"))
            rows.append(row)
        return rows

    def summary(self):
        floor = dict((name, dict(wall=self.median(("floor", name)), cpu=self.median(("floor", name), "cpu"),
                                 runs=len(self.results.get(("floor", name), ()))))
                     for name in FLOOR_PLAYBOOKS)
        per_task = dict(debug=self.per_task(("floor", "debug")))
        per_task.update((variant, self.per_task(("one_request", variant))) for variant in self.variants)
        runs = dict((variant, sorted(set(len(self.results.get((s.key, variant), ())) for s in self.scenarios)))
                    for variant in self.variants)
        return dict(rows=self.rows(), floor=floor, per_task=per_task, sizes=self.sizes, runs=runs,
                    load=_spread(self.loads), machine=machine(),
                    duration=time.monotonic() - self.started if self.started else None)


def _loads():
    return " ".join("%.2f" % x for x in os.getloadavg())


def _ratio(a, b):
    return a / b if a is not None and b else None


def _spread(values):
    if not values:
        return None
    return dict(min=min(values), median=statistics.median(values), max=max(values))


def machine():
    import ansible  # pylint: disable=import-outside-toplevel

    return dict(cores=os.cpu_count(), python=platform.python_version(), ansible_core=ansible.__version__,
                system="%s %s" % (platform.system(), platform.machine()))


# Reporting ---------------------------------------------------------------------------------------


def _s(value, digits=2):
    return "–" if value is None else "%.*f" % (digits, value)


def _ms(value):
    return "–" if value is None else "%.0f ms" % (value * 1000)


def table(summary):
    """The results as Markdown tables (the same text is printed and written)."""
    lines = [
        "| # | scenario | collection (in-process) | uri | ratio | collection (module path) | module/uri "
        "| requests: collection / module / uri | task runs: collection / uri |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in summary["rows"]:
        inp, mod, uri = (row.get(v, {}) for v in VARIANTS)
        lines.append("| %d | %s | %s s | %s s | **%s** | %s s | %s | %s / %s / %s | %s / %s |" % (
            row["number"], row["title"], _s(inp.get("wall")), _s(uri.get("wall")), _s(row["ratio"]),
            _s(mod.get("wall")), _s(row["module_ratio"]), _n(inp.get("requests")), _n(mod.get("requests")),
            _n(uri.get("requests")), _n(inp.get("task_runs")), _n(uri.get("task_runs"))))
    floor, per_task, repeats = summary["floor"], summary["per_task"], summary["sizes"]["repeats"]
    lines += [
        "",
        "| per-task cost (same run; %d tasks, less the empty play) | wall | per task |" % repeats,
        "|---|---:|---:|",
        "| `ansible-playbook` with an empty play: the fixed cost of every run above | %s s | |" % _s(floor["empty"]["wall"]),
        "| `ansible.builtin.debug`: the dispatch floor | %s s | %s |" % (
            _s(floor["debug"]["wall"]), _ms(per_task["debug"])),
    ]
    for variant in VARIANTS:
        if variant in per_task:
            lines.append("| scenario 5, %s | %s s | %s |" % (
                VARIANT_LABELS[variant], _s(_wall_of(summary, "one_request", variant)), _ms(per_task[variant])))
    return "\n".join(lines)


def _n(value):
    return "–" if value is None else "{:,}".format(value)


def _wall_of(summary, key, variant):
    for row in summary["rows"]:
        if row["key"] == key:
            return row.get(variant, {}).get("wall")
    return None


def verdicts(summary):
    """The issue's targets, each with the measured value and whether it is met."""
    found = []
    for row in summary["rows"]:
        inp = row.get("in_process", {})
        if inp.get("requests") is not None:
            exact = "" if row["exact"] else ">= "
            at_floor = inp["requests"] == row["minimum"] if row["exact"] else inp["requests"] >= row["minimum"]
            found.append(("scenario %d: the collection's requests at the minimum (%s%d)" % (
                row["number"], exact, row["minimum"]), "%d" % inp["requests"], at_floor))
    for row in summary["rows"]:
        if row["ratio"] is not None:
            found.append(("scenario %d: in-process at least 5x faster than uri (ratio <= 0.2)" % row["number"],
                          "%.2f" % row["ratio"], row["ratio"] <= 0.2))
    debug, inp = summary["per_task"].get("debug"), summary["per_task"].get("in_process")
    if debug and inp:
        found.append(("scenario 5: per-task cost within 2x of ansible.builtin.debug's",
                      "%s vs %s (%.2fx)" % (_ms(inp), _ms(debug), inp / debug), inp <= 2 * debug))
    for row in summary["rows"]:
        if row["module_ratio"] is not None:
            found.append(("scenario %d: module path no slower than uri (ratio <= 1)" % row["number"],
                          "%.2f" % row["module_ratio"], row["module_ratio"] <= 1.0))
    return found


COLORS = dict(in_process="#2a9d8f", module="#e9c46a", uri="#e76f51", debug="#8d99ae")
PER_TASK_LABELS = dict(debug="debug\n(the floor)", in_process="user_info\nin-process", module="user_info\nmodule path",
                       uri="uri GET")


def chart(summary, path):
    import matplotlib  # pylint: disable=import-outside-toplevel
    import matplotlib.ticker  # pylint: disable=import-outside-toplevel

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel

    rows = summary["rows"]
    figure, (left, right) = plt.subplots(1, 2, figsize=(13, 5.4), gridspec_kw=dict(width_ratios=[3, 1.5]))
    width = 0.27
    for index, variant in enumerate(VARIANTS):
        values = [row.get(variant, {}).get("wall") or 0 for row in rows]
        bars = left.bar([n + (index - 1) * width for n in range(len(rows))], values, width,
                        label=VARIANT_LABELS[variant], color=COLORS[variant])
        left.bar_label(bars, fmt="%.1f", fontsize=7, padding=1)
    left.set_xticks(range(len(rows)))
    left.set_xticklabels(["%d. %s" % (row["number"], row["key"].replace("_", " ")) for row in rows])
    left.set_ylabel("wall time of the playbook, s (median)")
    left.set_title("The same outcome: the collection and ansible.builtin.uri")
    left.legend(frameon=False)
    per_task = summary["per_task"]
    names = [name for name in PER_TASK_LABELS if per_task.get(name) is not None]
    bars = right.bar(range(len(names)), [per_task[name] * 1000 for name in names],
                     color=[COLORS[name] for name in names])
    right.bar_label(bars, fmt="%.0f", fontsize=8, padding=1)
    right.set_yscale("log")
    right.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _position: "%g" % value))
    right.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    right.set_xticks(range(len(names)))
    right.set_xticklabels([PER_TASK_LABELS[name] for name in names], fontsize=8)
    right.set_ylabel("ms per task (log scale)")
    right.set_title("Per-task cost (scenario 5)")
    load = summary.get("load") or {}
    figure.text(0.01, 0.01, "%d cores, ansible-core %s, Python %s; 1-minute load average during the run %s to %s" % (
        summary["machine"]["cores"], summary["machine"]["ansible_core"], summary["machine"]["python"],
        _s(load.get("min")), _s(load.get("max"))), fontsize=7, color="#555555")
    figure.tight_layout(rect=(0, 0.03, 1, 1))
    figure.savefig(path, dpi=110)
    plt.close(figure)


DOC_INTRO = """\
# Benchmarks

The collection against the same outcome written by hand with `ansible.builtin.uri`, the way
people script the API without it. Generated by `make bench` (`tests/bench/run.py`); do not
edit by hand. The playbooks of both sides are in `tests/bench/playbooks/`.

Each scenario starts from the same emulator state (reset, then fixtures) on both sides, and
each side reaches the same end state, which the benchmark checks after every run. The uri
playbooks read first and write only what is missing or differs, so they are idempotent too,
and they page with the largest page (100) and wait with `until`. The collection runs each
scenario twice: through its action plugins in-process (the default), and through the
ordinary module path (`planetscale_in_process: false`). Branches become ready
{ready_delay:g} s after they are created, on both sides.

Wall times are medians over runs of the whole `ansible-playbook` command, start-up included.
Runs per median: {runs}. The quick runs are spread between the slow ones, so that a change
of load hits every variant; the slow ones are repeated only as far as the time budget allows
(each of them averages the load over hundreds of tasks). Requests are counted by the
emulator. A task run is a task or loop item that ran: skipped items do not count, retries
of `until` do.

Machine: {cores} cores, {system}, Python {python}, ansible-core {ansible_core}. The run took
{duration}. The 1-minute load average was {load}: {load_meaning}

"""

DOC_NOTES = """
## Where the time goes

Per task in scenario 5 (from the table above): the dispatch floor, `ansible.builtin.debug`,
costs {debug}; the collection's task, in-process, {in_process}; a task that runs a module
(uri, or the collection's module path) {uri}. That last cost is the one in-process removes:
Ansible writes an AnsiballZ payload and starts a new Python that unpacks it and imports
`ansible.module_utils` (compiled from the payload every time), whatever the module then does.

Profiles (`python tests/bench/profile_run.py SCENARIO VARIANT` runs one scenario with
cProfile in `ansible-playbook` and in every worker process) show, for ansible-core 2.21:

- **In-process, one request** (scenario 5): about half of a task's worker time is
  Ansible's own dispatch (as for `debug`), a fifth is Ansible templating the
  `module_defaults` values, and the rest is the action plugin: mostly the request through
  `requests` to the emulator (which answers in about 10 ms here); the collection's own code
  (argument-spec validation, the session, masking) is about 3 ms of it. Credentials from
  the environment (`PLANETSCALE_SERVICE_TOKEN_ID`, `PLANETSCALE_SERVICE_TOKEN`) instead of
  templated `module_defaults` avoid the templating.
- **List** (scenario 4): the 50 pages take about 1.5 s. Most of the rest is Ansible
  handling a 4 MB result: registering it (`finalize_registered_values` walks every value,
  two thirds of the worker's time), the callback's conversion of it in the main process,
  and masking the `no_log` values in it (`remove_values`, about 1 s, which the module path
  pays as well, in `exit_json`).
- **Create** (scenario 3): the branches are created without waiting and then waited for, so
  their start-up overlaps (as in the uri playbook); the wait polls with growing intervals
  from 1 s, so a branch that is not ready at the first read costs that second (a 51st
  request), and none is spent when, as under load, creating the others took longer.
- **Module path** (`planetscale_in_process: false`): the module run that uri pays, plus
  `requests`, which the module process imports (with urllib3, idna, charset_normalizer and
  certifi) where uri imports Ansible's `module_utils.urls` instead; on this machine either
  costs a few hundred ms per task. So a one-request task costs about the same through the
  module path as through uri (scenario 5's ratio is about 1, within the spread of single runs
  under load), and the module path is faster wherever it needs fewer tasks (scenarios 2 to 4).
- **No-op and update** (scenarios 1 and 2): one GET per resource, one PATCH per changed
  team: the minimum. The uri playbooks make the same requests, but each costs a module run,
  and the update needs a second task per team (the read, then the write). In scenario 1,
  where uri needs no more tasks than the collection, the module path and uri both cost one
  module run per resource, so their ratio is 1 within the spread of single runs (each run's
  time is in `build/bench/results.json`): a module run bounds both, and in-process is the
  way below it.

A uri playbook could list the teams in one request instead of reading each (fewer module
runs than the collection's one task per team); the scenarios follow the issue's model of one
task per resource, which is how both sides are usually written.
"""


def load_meaning(median, cores):
    """What the load average says about the times: the benchmark alone keeps about one core busy."""
    if median is None or not cores:
        return "not measured."
    if median <= cores:
        return "the benchmark itself (ansible-playbook and the emulator); the machine was otherwise idle."
    return ("other work shared the machine, so every variant ran slower than it would on an idle one; "
            "compare the ratios.")


def document(summary, path_md, path_png):
    load = summary["load"] or {}
    short = dict(in_process="in-process", module="module path", uri="uri")
    runs = ", ".join("%s %s" % (short[variant], "/".join(map(str, counts))) for variant, counts in summary["runs"].items())
    runs += ", the floor %d" % summary["floor"]["empty"]["runs"]
    duration = summary.get("duration")
    text = DOC_INTRO.format(runs=runs, ready_delay=READY_DELAY,
                            duration="%d min %02d s" % divmod(int(duration), 60) if duration else "–",
                            load="%s to %s, median %s" % (
                                _s(load.get("min")), _s(load.get("max")), _s(load.get("median"))),
                            load_meaning=load_meaning(load.get("median"), summary["machine"].get("cores")),
                            **summary["machine"])
    text += table(summary) + "\n\n![Wall time per scenario and per-task cost](%s)\n\n" % os.path.basename(path_png)
    text += "## Targets\n\n| target | measured | met |\n|---|---|---|\n"
    text += "".join("| %s | %s | %s |\n" % (name, value, "yes" if ok else "**no**")
                    for name, value, ok in verdicts(summary))
    per_task = summary["per_task"]
    text += DOC_NOTES.format(debug=_ms(per_task.get("debug")), in_process=_ms(per_task.get("in_process")),
                             uri=_ms(per_task.get("uri")))
    with open(path_md, "w", encoding="utf-8") as handle:
        handle.write(text)


def measure(args):
    """Run the benchmark as the command line says: (summary, results)."""
    scenarios = args.scenarios.split(",") if args.scenarios else None
    workdir = tempfile.mkdtemp(prefix="planetscale-bench-")
    try:
        runner = Runner(workdir)
        with Emulator(args.emulator_python, port=args.port, log_path=os.path.join(workdir, "emulator.log")) as emulator:
            print("emulator at %s; load %s" % (emulator.url, _loads()))
            bench = Bench(emulator, runner, sizes=SMOKE if args.smoke else FULL, scenarios=scenarios,
                          variants=args.variants.split(","), runs=args.runs, slow_runs=args.slow_runs,
                          budget=args.budget)
            bench.run()
        return bench.summary(), bench.results
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


# Command line ------------------------------------------------------------------------------------


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of the in-process variant and the floor")
    parser.add_argument("--slow-runs", type=int, default=3, help="runs of the module path and the uri variant")
    parser.add_argument("--budget", type=float, default=540, help="seconds after which no repeat run starts")
    parser.add_argument("--scenarios", help="comma-separated keys: " + ",".join(cls.key for cls in SCENARIOS))
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated: " + ",".join(VARIANTS))
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (the test suite's)")
    parser.add_argument("--emulator-python", default=os.environ.get(
        "BENCH_EMULATOR_PYTHON", os.path.join(ROOT, ".venv", "emulator", "bin", "python")))
    parser.add_argument("--port", type=int, default=0, help="emulator port (0: a free one)")
    parser.add_argument("--out", default=os.path.join(ROOT, "docs"), help="where benchmarks.md/png go")
    parser.add_argument("--json", default=os.path.join(ROOT, "build", "bench", "results.json"))
    parser.add_argument("--no-write", action="store_true", help="print the table only")
    parser.add_argument("--from-json", metavar="PATH", help="report the runs a previous --json saved; run nothing")
    return parser.parse_args(argv)


def load_summary(path):
    """The summary of the runs a previous run saved with --json, computed by this version of the report."""
    with open(path, encoding="utf-8") as handle:
        saved = json.load(handle)
    keys = [tuple(key.split("/", 1)) for key in saved["results"]]
    bench = Bench(None, None, sizes=saved["sizes"], scenarios=set(k for k, _v in keys if k != "floor"),
                  variants=[v for v in VARIANTS if any(variant == v for k, variant in keys if k != "floor")])
    bench.results = dict((tuple(key.split("/", 1)), runs) for key, runs in saved["results"].items())
    summary = bench.summary()
    summary.update((name, saved[name]) for name in ("load", "machine", "duration", "runs"))
    return summary, bench.results


def main(argv=None):
    args = parse_args(argv)
    if args.from_json:
        summary, results = load_summary(args.from_json)
        args.json = None
    else:
        try:
            summary, results = measure(args)
        except BenchError as error:
            print("benchmark failed: %s" % error, file=sys.stderr)
            return 1
    print()
    print(table(summary))
    print()
    for name, value, ok in verdicts(summary):
        print("%-4s %s: %s" % ("ok" if ok else "MISS", name, value))
    if args.json:
        os.makedirs(os.path.dirname(args.json), exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(dict(summary, results={"%s/%s" % key: runs for key, runs in results.items()}), handle, indent=1)
    if not args.no_write:
        os.makedirs(args.out, exist_ok=True)
        path_md, path_png = os.path.join(args.out, "benchmarks.md"), os.path.join(args.out, "benchmarks.png")
        chart(summary, path_png)
        document(summary, path_md, path_png)
        print("\nwrote %s and %s" % (os.path.relpath(path_md), os.path.relpath(path_png)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
