# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark's runs: each scenario prepared, run through each variant with ansible-playbook
(the harness's runner), checked and recorded: wall and CPU seconds, requests, task runs."""

from __future__ import annotations

import os
import statistics
import time
from collections import Counter

import yaml

from scenarios import (FLOOR_PLAYBOOKS, FULL, PLAYBOOKS, SCENARIOS, TRUNCATED, VARIANTS, BenchError, base_vars,
                       in_process)


def measure_once(ansible, playbook, extra_vars, in_process=True, prefix=(), collections_path=None):
    """Run a playbook once: wall and CPU seconds, task runs, changes; a failed run raises BenchError.
    collections_path: where the collection is found (an earlier version of it), instead of this checkout."""
    run = ansible.run(playbook, extra_vars, in_process=in_process, hosts=("localhost",), prefix=prefix, timeout=3600,
                      collections_path=collections_path)
    if run.rc != 0:
        raise BenchError("%s failed (exit %s):\n%s" % (os.path.basename(playbook), run.rc, run.output[-4000:]))
    return dict(wall=run.elapsed, cpu=run.cpu, task_runs=run.task_runs, changed=run.changed)


class Bench:
    """Prepare, run and record every scenario.

    The first round measures each scenario as: the floor (an empty play, then debug), the
    collection in-process, uri, in-process again, the module path, in-process again; so the
    quick runs are spread over the whole time of the slow ones, and a change of load hits
    every variant. With an earlier version of the collection (baseline: a collections path
    that holds it), its in-process run follows uri and its module path run follows the module
    path's. Later rounds repeat the in-process variants and the floor up to `runs` times, then
    the slow variants up to `slow_runs` times, while the time budget allows (a run is only
    started when its first duration still fits).
    """

    def __init__(self, emulator, ansible, sizes=None, scenarios=None, variants=VARIANTS, runs=5, slow_runs=3,
                 budget=None, floor=True, log=print, link=None, baseline=None):
        self.emulator = emulator
        self.baseline = baseline  # collections path of the earlier version (the base_* variants), or None
        self.link = link  # links.LocalLink or links.WanLink: where the playbooks reach the emulator
        self.ansible = ansible  # a harness.Ansible with results=False: statuses and counts, no result bodies
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
            order = [v for v in ("in_process", "uri", "base_in_process", "in_process", "module", "base_module",
                                 "in_process") if v in self.variants]
            jobs += [((scenario.key, v), (lambda s=scenario, v=v: self.measure(s, v))) for v in order]
        return jobs

    @staticmethod
    def quick(key):
        """The floor and the in-process variants: a few seconds a run, where the others take tens."""
        return key[0] == "floor" or key[1] in ("in_process", "base_in_process")

    def wanted(self, key):
        return self.runs if self.quick(key) else self.slow_runs

    def run(self):
        self.started = time.monotonic()
        jobs = self.first_round()
        for key, job in jobs:
            if len(self.results.get(key, ())) < self.wanted(key):
                job()
        self.log("first round done after %.0fs, load %s" % (time.monotonic() - self.started, loads()))
        # one job per key; the quick ones (the floor and the in-process variants, a few seconds each) are
        # repeated to their count first, taking turns, so that their medians are not left to whatever time
        # the slow ones leave; then the slow ones, taking turns too
        repeats = dict(jobs)
        for quick in (True, False):
            while True:
                due = [(key, job) for key, job in repeats.items() if self.quick(key) == quick
                       and len(self.results[key]) < self.wanted(key) and self.fits(key)]
                if not due:
                    break
                for key, job in due:
                    if self.fits(key):
                        job()
                self.log("repeats after %.0fs, load %s" % (time.monotonic() - self.started, loads()))
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
        copy = os.path.join(self.ansible.workdir, os.path.basename(path))
        with open(copy, "w", encoding="utf-8") as handle:
            yaml.safe_dump(plays, handle)
        return copy

    def measure_floor(self, name):
        self.emulator.reset()
        run = measure_once(self.ansible, self.playbook(os.path.join(PLAYBOOKS, FLOOR_PLAYBOOKS[name])),
                           self.base_vars())
        self.record(("floor", name), run, Counter())

    def base_vars(self):
        if self.link is None:
            return base_vars(self.emulator)
        return base_vars(self.emulator, self.link.api_url, self.link.ca_path)

    def measure(self, scenario, variant):
        extra_vars = dict(self.base_vars(), **scenario.prepare(self.emulator))
        self.emulator.clear_requests()
        if self.link is not None:
            self.link.clear()
        if variant.startswith("base_") and not self.baseline:
            raise BenchError("The %s variant runs an earlier version of the collection: give its ref (--baseline)." % variant)
        run = measure_once(self.ansible, self.playbook(scenario.playbook(variant)), extra_vars,
                           in_process=in_process(variant),
                           collections_path=self.baseline if variant.startswith("base_") else None)
        connections = self.link.connections() if self.link is not None else None
        methods = Counter(r["method"] for r in self.emulator.requests())
        scenario.check(self.emulator, run)
        run = self.record((scenario.key, variant), dict(run, connections=connections), methods)
        run["problems"] = scenario.expected(variant).problems(methods, run["task_runs"], retries_count=variant == "uri")
        if connections is not None and not variant.startswith("base_"):  # the earlier version kept what it kept
            fewest, most = scenario.connections(variant, run["task_runs"])
            if not fewest <= connections <= most:
                run["problems"].append("connections: %d, expected %s" % (
                    connections, fewest if fewest == most else "%d to %d" % (fewest, most)))
        if run["problems"]:
            self.log("  %s/%s is not as expected: %s" % (scenario.key, variant, "; ".join(run["problems"])))
        return run

    def record(self, key, run, methods):
        self.loads.append(os.getloadavg()[0])
        run = dict(run, requests=sum(methods.values()), methods=dict(methods))
        self.results.setdefault(key, []).append(run)
        self.log("  %-12s %-10s %7.2fs wall %7.2fs cpu %5d requests %4d task runs %s connections" % (
            key[0], key[1], run["wall"], run["cpu"], run["requests"], run["task_runs"],
            "–" if run.get("connections") is None else run["connections"]))
        return run

    def median(self, key, field="wall"):
        runs = self.results.get(key)
        return statistics.median(run[field] for run in runs) if runs else None

    def last(self, key, field):
        runs = self.results.get(key)
        return runs[-1][field] if runs else None

    def duration(self):
        return time.monotonic() - self.started if self.started else None


def loads():
    return " ".join("%.2f" % x for x in os.getloadavg())
