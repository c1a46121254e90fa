# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark's scenarios: one outcome each, reached by a collection playbook and by a
hand-written ansible.builtin.uri playbook (playbooks/), from the same emulator state.

Each scenario prepares the emulator (reset, fixtures) and answers the playbooks' variables,
says what a run must cost (requests by method, task runs) and checks the end state.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
PLAYBOOKS = os.path.join(HERE, "playbooks")

READY_DELAY = 1.0  # seconds until a new branch is ready, the same for both sides
PAGE_SIZE = 100
DESCRIPTION = "Owned by the benchmark"
PASSWORD_NAME = "app"

# repeats: tasks of the one-request and debug playbooks (they have 50; fewer runs the first ones)
# loop: items of the loop scenario's one task
FULL = dict(teams=40, passwords=40, branches=10, members=5000, repeats=50, loop=40)
SMOKE = dict(teams=2, passwords=2, branches=1, members=250, repeats=3, loop=3)


def _client_constant(name):
    """A constant of the collection's client (plugins/module_utils/pagination.py), read from its source: the
    benchmark runs beside the collection, not with it on its import path."""
    with open(os.path.join(HERE, "..", "..", "plugins", "module_utils", "pagination.py"), encoding="utf-8") as handle:
        return int(re.search(r"^%s = (\d+)" % name, handle.read(), re.M).group(1))


PARALLEL_PAGES = _client_constant("PARALLEL_PAGES")  # connections a list may open at once

VARIANTS = ("in_process", "module", "uri")
# the same collection playbooks run with an earlier version of the collection (run.py --baseline REF), side by side
# by default the last commit before connections were kept across a loop's items and lists read side by side
DEFAULT_BASELINE = "07e838cb3019c39d43c77c5139c94b65479b8375"
BASELINE_VARIANTS = ("base_in_process", "base_module")
ALL_VARIANTS = VARIANTS + BASELINE_VARIANTS
VARIANT_LABELS = dict(in_process="collection, in-process", module="collection, module path", uri="ansible.builtin.uri",
                      base_in_process="earlier version, in-process", base_module="earlier version, module path")


def in_process(variant):
    """Whether a variant runs the collection in-process (the default; the module path and uri do not)."""
    return variant not in ("module", "base_module")


class BenchError(Exception):
    """The benchmark cannot go on: a playbook failed, or a run did not reach its scenario's end state."""


def base_vars(emulator, api_url=None, ca_path=None):
    """The variables every playbook of the benchmark takes: the emulator's API (api_url: where the playbooks
    reach it, the latency proxy in the WAN profile; ca_path: the CA of its certificate) and credentials."""
    world = emulator.world
    found = dict(bench_api_url=api_url or emulator.api_url, bench_organization=world["organization"],
                 bench_database=world["database"], bench_branch=world["branch"],
                 bench_service_token_id=world["service_token"]["id"],
                 bench_service_token=world["service_token"]["token"])
    if ca_path:
        found["bench_ca_path"] = ca_path
    return found


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

    tasks = 1  # tasks of the collection's playbook (in-process, each runs in a worker process of its own)

    def round_trips(self, variant, requests):
        """Round trips one after another that a run's requests need at least: one each."""
        return requests

    def connections(self, variant, task_runs):
        """(fewest, most) TCP connections a run may open: in-process at most one per task (its loop items share the
        worker's, and its tasks the run's connection keeper's, one per key); through a module process (the module
        path, uri) one per task run."""
        if variant == "in_process":
            return 1, self.tasks
        return task_runs, task_runs


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
    key, number, tasks = "noop", 1, 2

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
    key, number, tasks = "create", 3, 3

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

    def round_trips(self, variant, requests):
        if variant == "uri":
            return requests
        return 1 + int(math.ceil((requests - 1) / float(PARALLEL_PAGES)))  # the first page, then PARALLEL_PAGES at a time

    def connections(self, variant, task_runs):
        if variant == "uri":
            return task_runs - 1, task_runs - 1  # the set_fact opens none
        return 1, PARALLEL_PAGES  # the pages after the first, read PARALLEL_PAGES at a time


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

    def connections(self, variant, task_runs):
        if variant == "in_process":
            return 1, 1  # the run's connection keeper keeps one for every task
        return task_runs, task_runs  # a module process each: nothing to share


class TwoKeys(Scenario):
    key, number = "two_keys", 7
    TASKS = 30

    @property
    def tasks(self):
        return min(self.TASKS, self.sizes["repeats"])

    @property
    def title(self):
        return "two keys: user_info with two service tokens in turn, %d tasks" % self.tasks

    def prepare(self, emulator):
        emulator.reset()
        second = emulator.world["forbidden_service_token"]  # another user's token: another session key
        return dict(bench_second_token_id=second["id"], bench_second_token=second["token"])

    def expected(self, variant):
        return Expected(dict(GET=self.tasks), self.tasks)

    def connections(self, variant, task_runs):
        if variant == "in_process":
            return 2, 2  # one kept connection per key, never one shared
        return task_runs, task_runs


class Loop(Scenario):
    key, number = "loop", 6

    @property
    def title(self):
        return "loop: %(loop)d teams read in one task's loop" % self.sizes

    def prepare(self, emulator):
        emulator.reset()
        created = emulator.seed(teams=dict(count=self.sizes["loop"], prefix="bench"))
        return dict(bench_teams=created["teams"])

    def expected(self, variant):
        return Expected(dict(GET=self.sizes["loop"]), self.sizes["loop"])


SCENARIOS = (NoOp, Update, Create, List, OneRequest, Loop, TwoKeys)
FLOOR_PLAYBOOKS = dict(empty="startup.empty.yml", debug="floor.debug.yml")
TRUNCATED = ("one_request.collection.yml", "one_request.uri.yml", "two_keys.collection.yml", "two_keys.uri.yml",
             "floor.debug.yml")
