# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The order of the benchmark's runs (runner.Bench.run), with jobs that record themselves instead of running
playbooks: the quick runs (the floor, the in-process variants) reach their count before any slow run is
repeated, and every run after the first round starts only while the budget allows its first duration."""

from __future__ import annotations

from runner import Bench
from scenarios import SMOKE


class _Jobs:
    """Jobs of a fake first round: each appends a run of a given wall time and records the order of calls."""

    def __init__(self, bench, walls):
        self.bench, self.walls, self.calls = bench, walls, []

    def job(self, key):
        def run():
            self.calls.append(key)
            self.bench.results.setdefault(key, []).append(dict(wall=self.walls[key]))
        return run


def _bench(walls, budget=None, runs=4, slow_runs=2):
    bench = Bench(None, None, sizes=SMOKE, scenarios=(), runs=runs, slow_runs=slow_runs, budget=budget,
                  log=lambda line: None)
    jobs = _Jobs(bench, walls)
    bench.first_round = lambda: [(key, jobs.job(key)) for key in walls]
    return bench, jobs


WALLS = {("floor", "empty"): 0.5, ("noop", "in_process"): 1.0, ("noop", "uri"): 20.0,
         ("noop", "base_in_process"): 1.0, ("noop", "module"): 20.0, ("noop", "base_module"): 20.0}


def test_quick_runs_reach_their_count_before_a_slow_run_is_repeated():
    bench, jobs = _bench(WALLS)
    bench.run()
    assert dict((key, len(runs)) for key, runs in bench.results.items()) == {
        ("floor", "empty"): 4, ("noop", "in_process"): 4, ("noop", "uri"): 2, ("noop", "base_in_process"): 4,
        ("noop", "module"): 2, ("noop", "base_module"): 2}
    repeated = jobs.calls[len(WALLS):]
    first_slow = min(index for index, key in enumerate(repeated) if not Bench.quick(key))
    assert all(Bench.quick(key) for key in repeated[:first_slow])
    assert all(not Bench.quick(key) for key in repeated[first_slow:])
    # the earlier version's in-process runs take turns with this version's
    quick = [key for key in repeated if key[0] != "floor"]
    assert quick[:2] == [("noop", "in_process"), ("noop", "base_in_process")]


def test_no_run_starts_after_the_budget_would_be_spent():
    bench, jobs = _bench(WALLS, budget=0)
    bench.run()
    assert jobs.calls == list(WALLS)  # the first round only: no repeat fits a budget already spent
