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

from report import summarize, table, verdicts
from runner import Bench
from scenarios import FLOOR_PLAYBOOKS, SCENARIOS, SMOKE, VARIANTS


@pytest.fixture(scope="module")
def bench(emulator, ansible):
    return Bench(emulator, ansible, sizes=SMOKE, log=lambda line: None)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("scenario", [cls.key for cls in SCENARIOS])
def test_scenario_costs_what_it_should(bench, scenario, variant):
    found = [s for s in bench.scenarios if s.key == scenario][0]
    run = bench.measure(found, variant)
    assert run["problems"] == []


def test_the_collection_is_at_the_minimum_of_requests():
    sizes = SMOKE
    expected = dict((cls.key, cls(sizes).expected("in_process")) for cls in SCENARIOS)
    assert expected["noop"].requests == Counter(GET=sizes["teams"] + sizes["passwords"])
    assert expected["update"].requests == Counter(GET=sizes["teams"], PATCH=sizes["teams"])
    assert expected["list"].requests == Counter(GET=3)  # 250 members, 100 a page
    assert expected["one_request"].requests == Counter(GET=sizes["repeats"])


@pytest.mark.parametrize("name", sorted(FLOOR_PLAYBOOKS))
def test_floor_playbooks_run(bench, name):
    bench.measure_floor(name)
    run = bench.results[("floor", name)][-1]
    assert run["requests"] == 0
    assert run["task_runs"] == (bench.sizes["repeats"] if name == "debug" else 0)


def test_the_report_of_the_runs_above_renders(bench):
    """The summary, tables and targets of what the tests above measured (the page and the chart need a full run)."""
    if not bench.results:
        pytest.skip("no run was measured in this session (run the whole file)")
    summary = summarize(bench)
    assert [row["key"] for row in summary["rows"]] == [cls.key for cls in SCENARIOS]
    text = table(summary)
    assert text.count("\n| ") >= len(SCENARIOS) and "| `ansible.builtin.debug`: the dispatch floor |" in text
    assert all(isinstance(ok, bool) for _name, _value, ok in verdicts(summary))
