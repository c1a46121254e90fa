# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark's scaling curves (issue 49): the same work at sizes x10 apart, in the WAN profile.

- inventory: the branches inventory (planetscale.cloud.branches) of N databases of 3 branches each, in a play
  that checks it holds every branch (its databases' branches and PostgreSQL branches' default roles are read
  PARALLEL_PAGES at a time);
- members: team_member_info of a team of N members (the pages after the first read PARALLEL_PAGES at a time);
- audit: audit_log_info with a since filter over N events in the window (and older ones behind them, where the
  module stops): a cursor list, one page after another.

Each point is one ansible-playbook run (in-process) through peak.py, which gives the peak resident memory of the
controller's largest process (ansible-playbook, which holds the inventory, or a task's worker, which holds its
result). A point records its wall time, requests (counted by the emulator, against the minimum), round trips that
follow one another, the floor (the empty play, the dispatch of its task runs, those round trips), time per item
and peak memory.
"""

from __future__ import annotations

import json
import math
import os
import sys
from concurrent.futures import ThreadPoolExecutor

from scenarios import PAGE_SIZE, PARALLEL_PAGES, PLAYBOOKS, BenchError

HERE = os.path.dirname(os.path.abspath(__file__))
PEAK = os.path.join(HERE, "peak.py")

SIZES = dict(inventory=(10, 100, 1000), members=(500, 5000, 50000), audit=(1000, 10000, 100000))
SMOKE_SIZES = dict(inventory=(4,), members=(250,), audit=(250,))  # one small point each (make bench-smoke)
BRANCHES = 3  # branches of each seeded database: main and dev-1, dev-2
MEMBERS_PER_SEED = 20000  # the emulator seeds at most this many team members at once
EVENTS_PER_SEED = 10000  # and this many audit events
OLDER_EVENTS = 150  # events before the since filter's window: the module stops at the first


def side_by_side(reads):
    """Round trips of reads sent PARALLEL_PAGES at a time."""
    return int(math.ceil(reads / float(PARALLEL_PAGES)))


def list_round_trips(pages):
    """Round trips of a page-based list (Pagination.paginate): the first page, then the others PARALLEL_PAGES at a
    time once the first says there are more than two (two pages are read one after the other)."""
    if pages <= 2:
        return max(pages, 1)
    return 1 + side_by_side(pages - 1)


class Curve:
    key = unit = None

    def title(self, size):
        raise NotImplementedError

    def prepare(self, emulator, size, workdir, base):
        """Seed the emulator: (playbook variables, extra ansible-playbook arguments, hosts of the -i of the run)."""
        raise NotImplementedError

    def items(self, size):
        return size

    def minimum(self, size):
        """The requests a run needs at least (its exact count)."""
        raise NotImplementedError

    def round_trips(self, size):
        """Round trips one after another that those requests need, with the parallelism the collection uses."""
        raise NotImplementedError

    task_runs = 1

    def playbook(self):
        return os.path.join(PLAYBOOKS, "scale_%s.collection.yml" % self.key)


class Inventory(Curve):
    key, unit = "inventory", "branches"

    def __init__(self):
        self.world = None  # (databases, their branches, PostgreSQL branches) of the world before seeding
        self.postgresql = []  # (database, branch) of the world's own PostgreSQL branches

    def title(self, size):
        return "inventory: {:,} databases x {} branches".format(size, BRANCHES)

    def _world(self, emulator):
        """The seeded world's own databases, branches and PostgreSQL branches (read once, after a reset)."""
        if self.world is None:
            organization = "/organizations/%s/databases" % emulator.world["organization"]
            databases = emulator.list(organization)
            branches = dict((db["name"], emulator.list("%s/%s/branches" % (organization, db["name"])))
                            for db in databases)
            self.postgresql = [(name, b["name"]) for name, found in sorted(branches.items()) for b in found
                               if b.get("kind") == "postgresql"]
            self.world = (len(databases), sum(len(found) for found in branches.values()), len(self.postgresql))
        return self.world

    def _counts(self, size):
        """(databases, branches, PostgreSQL branches) of the organization once size databases are seeded (every
        fifth one PostgreSQL: tests/emulator/world/seed.py)."""
        databases, branches, postgresql = self.world
        return databases + size, branches + BRANCHES * size, postgresql + BRANCHES * (size // 5)

    def items(self, size):
        return self._counts(size)[1]

    def prepare(self, emulator, size, workdir, base):
        emulator.reset()
        self._world(emulator)
        names = emulator.seed(databases=dict(count=size, prefix="scale", branches=BRANCHES))["databases"]
        self._default_roles(emulator, self.postgresql + [(name, branch) for name in names[4::5] for branch in (
            ["main"] + ["dev-%d" % n for n in range(1, BRANCHES)])])
        config = dict(plugin="planetscale.cloud.branches", organization=base["bench_organization"],
                      api_url=base["bench_api_url"], service_token_id=base["bench_service_token_id"],
                      service_token=base["bench_service_token"], api_retries=0)
        if base.get("bench_ca_path"):
            config["ca_path"] = base["bench_ca_path"]
        path = os.path.join(workdir, "scale.planetscale.branches.yml")
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as handle:
            json.dump(config, handle)
        return dict(bench_hosts=self.items(size)), ["-i", path], ()

    @staticmethod
    def _default_roles(emulator, branches):
        """Read each PostgreSQL branch's default role once, directly: the emulator makes a branch's default role
        (and its role on the data plane, about 0.15 s each, one at a time) at its first read, where the
        platform's branches have theirs from the start; the runs then read roles that exist, as on the platform."""
        organization = "/organizations/%s/databases" % emulator.world["organization"]
        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(lambda pair: emulator.api("GET", "%s/%s/branches/%s/roles/default" % (
                (organization,) + pair)), branches))

    def minimum(self, size):
        databases, _branches, postgresql = self._counts(size)
        return int(math.ceil(databases / float(PAGE_SIZE))) + databases + postgresql

    def round_trips(self, size):
        databases, _branches, postgresql = self._counts(size)
        return (list_round_trips(int(math.ceil(databases / float(PAGE_SIZE)))) + side_by_side(databases)
                + side_by_side(postgresql))


class Members(Curve):
    key, unit = "members", "members"

    def title(self, size):
        return "member list: a team of {:,}".format(size)

    def prepare(self, emulator, size, workdir, base):
        emulator.reset()
        team = emulator.seed(teams=dict(count=1, prefix="scale"))["teams"][0]
        left = size
        while left:
            emulator.seed(team_members=dict(team=team, count=min(left, MEMBERS_PER_SEED)))
            left -= min(left, MEMBERS_PER_SEED)
        return dict(bench_large_team=team, bench_members=size), [], ("localhost",)

    def minimum(self, size):
        return int(math.ceil(size / float(PAGE_SIZE)))

    def round_trips(self, size):
        return list_round_trips(self.minimum(size))

    def playbook(self):
        return os.path.join(PLAYBOOKS, "list.collection.yml")


class Audit(Curve):
    key, unit = "audit", "events"

    def title(self, size):
        return "audit log: {:,} events since a day ago".format(size)

    def prepare(self, emulator, size, workdir, base):
        emulator.reset()
        organization = emulator.world["organization"]
        emulator.control("POST", "/audit-log/%s" % organization, dict(count=OLDER_EVENTS, hours_ago=48))
        left = size
        while left:
            emulator.control("POST", "/audit-log/%s" % organization,
                             dict(count=min(left, EVENTS_PER_SEED), hours_ago=1))
            left -= min(left, EVENTS_PER_SEED)
        return dict(bench_events=size), [], ("localhost",)

    def minimum(self, size):
        return size // PAGE_SIZE + 1  # the pages of the window, and the one where the older events begin

    def round_trips(self, size):
        return self.minimum(size)  # a cursor list: each page names the next


CURVES = (Inventory, Members, Audit)


def parse_sizes(texts):
    """--curve-size KEY=N,N,N (repeatable) over SIZES."""
    sizes = dict(SIZES)
    for text in texts or ():
        key, dummy, numbers = text.partition("=")
        if key not in sizes or not numbers:
            raise BenchError("--curve-size takes KEY=N,N,... with KEY one of %s, not %r" % (", ".join(SIZES), text))
        sizes[key] = tuple(int(n.replace("_", "")) for n in numbers.split(","))
    return sizes


class Curves:
    """The curves' points, measured with a Bench's emulator, Ansible and link (the WAN profile)."""

    def __init__(self, bench, keys=None, sizes=None, runs=1, log=print, floor=True):
        self.bench = bench
        self.floor = floor  # measure the floor (the empty play, debug) where the bench has not
        self.curves = [cls() for cls in CURVES if keys is None or cls.key in keys]
        self.sizes = dict(sizes or SIZES)
        self.runs = runs
        self.log = log
        self.points = []

    def run(self):
        for name in ("empty", "debug") if self.floor else ():  # the floor of every point
            if not self.bench.results.get(("floor", name)):
                self.bench.measure_floor(name)
        for curve in self.curves:
            for size in self.sizes[curve.key]:
                for dummy in range(self.runs):
                    self.measure(curve, size)
        return self.points

    def measure(self, curve, size):
        bench, emulator = self.bench, self.bench.emulator
        base = bench.base_vars()
        extra_vars, args, hosts = curve.prepare(emulator, size, bench.ansible.workdir, base)
        emulator.clear_requests()
        if bench.link is not None:
            bench.link.clear()
        peak_path = os.path.join(bench.ansible.workdir, "peak.txt")
        run = bench.ansible.run(curve.playbook(), dict(base, **extra_vars), in_process=True, hosts=hosts, args=args,
                                prefix=(sys.executable, PEAK, peak_path), timeout=3600)
        if run.rc != 0:
            raise BenchError("%s at %s failed (exit %s):\n%s" % (curve.key, size, run.rc, run.output[-4000:]))
        with open(peak_path, encoding="utf-8") as handle:
            peak = int(handle.read())
        requests = len(emulator.requests())
        point = dict(curve=curve.key, size=size, title=curve.title(size), unit=curve.unit, items=curve.items(size),
                     wall=run.elapsed, cpu=run.cpu, requests=requests, minimum=curve.minimum(size),
                     round_trips=curve.round_trips(size), task_runs=run.task_runs, peak_kib=peak,
                     connections=bench.link.connections() if bench.link is not None else None)
        point["problems"] = []
        if requests != point["minimum"]:
            point["problems"].append("requests: %d, expected %d" % (requests, point["minimum"]))
        if run.task_runs != curve.task_runs:
            point["problems"].append("task runs: %d, expected %d" % (run.task_runs, curve.task_runs))
        self.points.append(point)
        self.log("  %-10s %8s %7.2fs wall %7.2fs cpu %6d requests (minimum %d) %5d round trips %7.1f MB peak%s" % (
            curve.key, "{:,}".format(size), run.elapsed, run.cpu, requests, point["minimum"], point["round_trips"],
            peak / 1024.0, "; " + "; ".join(point["problems"]) if point["problems"] else ""))
        return point
