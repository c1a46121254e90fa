# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark once, at tiny sizes, so that it cannot rot: request counts and task runs, never times.

Every scenario runs through each variant (the collection in-process, the collection through
the module path, the hand-written uri playbook), reaches the scenario's end state (the
scenario checks it), and costs exactly the requests and task runs the scenario expects:
the collection at the minimum (a no-op is one request per resource, an update a GET and a
PATCH, a list ceil(N/100) pages).
"""

from __future__ import annotations

from collections import Counter

import pytest

import run as bench


@pytest.fixture(scope="module")
def harness(emulator, runner):
    return bench.Bench(emulator, runner, sizes=bench.SMOKE, log=lambda line: None)


@pytest.mark.parametrize("variant", bench.VARIANTS)
@pytest.mark.parametrize("scenario", [cls.key for cls in bench.SCENARIOS])
def test_scenario_costs_what_it_should(harness, scenario, variant):
    found = [s for s in harness.scenarios if s.key == scenario][0]
    run = harness.measure(found, variant)
    assert run["problems"] == []


def test_the_collection_is_at_the_minimum_of_requests():
    sizes = bench.SMOKE
    expected = dict((cls.key, cls(sizes).expected("in_process")) for cls in bench.SCENARIOS)
    assert expected["noop"].requests == Counter(GET=sizes["teams"] + sizes["passwords"])
    assert expected["update"].requests == Counter(GET=sizes["teams"], PATCH=sizes["teams"])
    assert expected["list"].requests == Counter(GET=3)  # 250 members, 100 a page
    assert expected["one_request"].requests == Counter(GET=sizes["repeats"])


@pytest.mark.parametrize("name", sorted(bench.FLOOR_PLAYBOOKS))
def test_floor_playbooks_run(harness, name):
    harness.measure_floor(name)
    run = harness.results[("floor", name)][-1]
    assert run["requests"] == 0
    assert run["task_runs"] == (harness.sizes["repeats"] if name == "debug" else 0)
