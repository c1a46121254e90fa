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

from conftest import SMOKE_DELAY
from curves import SMOKE_SIZES, Curves
from links import LocalLink, WanLink
from report import baseline_verdicts, curve_verdicts, curves_table, document, summarize, table, verdicts, wan_verdicts
from run import export_baseline
from runner import Bench
from scenarios import DEFAULT_BASELINE, FLOOR_PLAYBOOKS, SCENARIOS, SMOKE, VARIANTS


@pytest.fixture(scope="module")
def bench(emulator, ansible):
    return Bench(emulator, ansible, sizes=SMOKE, log=lambda line: None, link=LocalLink(emulator))


@pytest.fixture(scope="module")
def wan_bench(tls_emulator, ansible):
    link = WanLink(tls_emulator, delay=SMOKE_DELAY)
    yield Bench(tls_emulator, ansible, sizes=SMOKE, log=lambda line: None, link=link)
    link.close()


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("scenario", [cls.key for cls in SCENARIOS])
def test_scenario_costs_what_it_should(bench, scenario, variant):
    found = [s for s in bench.scenarios if s.key == scenario][0]
    run = bench.measure(found, variant)
    assert run["problems"] == []  # requests, task runs and connections (LocalLink: counted by the emulator)


# The WAN profile (over TLS, through the latency proxy, which counts the connections) sends the same requests as the
# local one, which the test above counts: here it runs only the scenarios whose connections are the subject.


def test_a_loop_shares_one_connection_in_process_and_opens_one_per_item_otherwise(wan_bench):
    loop = [s for s in wan_bench.scenarios if s.key == "loop"][0]
    runs = dict((variant, wan_bench.measure(loop, variant)) for variant in VARIANTS)
    assert [run["problems"] for run in runs.values()] == [[], [], []]
    counts = dict((variant, run["connections"]) for variant, run in runs.items())
    items = SMOKE["loop"]
    assert counts == dict(in_process=1, module=items, uri=items)


def test_the_tasks_of_a_run_share_a_kept_connection_per_key_in_process(wan_bench):
    """Issue 36: in-process, the run's connection keeper keeps one connection per session key across tasks (over
    TLS, through the latency proxy, which counts them); the module path opens one per task run."""
    counts = {}
    for key in ("one_request", "two_keys"):
        scenario = [s for s in wan_bench.scenarios if s.key == key][0]
        counts[key] = dict((variant, wan_bench.measure(scenario, variant)["connections"]) for variant in ("in_process",
                                                                                                          "module"))
    assert counts == dict(one_request=dict(in_process=1, module=SMOKE["repeats"]),
                          two_keys=dict(in_process=2, module=SMOKE["repeats"]))


def test_an_earlier_version_runs_side_by_side_and_is_the_earlier_code(emulator, ansible, tmp_path):
    """make bench's comparison with the collection before issue 22 (run.py --baseline): the earlier version is
    exported from git history and runs the same playbooks; its loop opens a connection per item, as it did,
    where this version's opens one, so the runs compared really are of two versions."""
    collections, commit = export_baseline(DEFAULT_BASELINE, str(tmp_path))
    assert commit == DEFAULT_BASELINE
    bench = Bench(emulator, ansible, sizes=SMOKE, log=lambda line: None, link=LocalLink(emulator), baseline=collections,
                  variants=("in_process", "base_in_process"))
    loop = [s for s in bench.scenarios if s.key == "loop"][0]
    runs = dict((variant, bench.measure(loop, variant)) for variant in bench.variants)
    assert [run["problems"] for run in runs.values()] == [[], []]
    assert runs["in_process"]["connections"] == 1
    assert runs["base_in_process"]["connections"] == SMOKE["loop"]
    summary = dict(summarize(bench), baseline=commit)
    found = baseline_verdicts(summary)
    assert [name for name, _value, _ok in found] == [
        "local, scenario 6: in-process no slower than the earlier version %s (now/earlier <= 1.05)" % commit[:12]]
    path = tmp_path / "benchmarks.md"
    document(dict(local=summary), str(path), str(tmp_path / "benchmarks.png"))
    assert "### Local profile: this version against the earlier one" in path.read_text(encoding="utf-8")


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


def test_the_page_shows_both_profiles_with_floors_and_connections(bench, wan_bench, tmp_path):
    """docs/benchmarks.md as make bench writes it, from the smoke runs of both profiles above (the chart needs
    matplotlib, which .venv/bench has: make bench draws it)."""
    if not bench.results or not wan_bench.results:
        pytest.skip("no run of both profiles was measured in this session (run the whole file)")
    summaries = dict(local=summarize(bench), wan=summarize(wan_bench))
    assert summaries["wan"]["rtt"] == 2 * SMOKE_DELAY and summaries["local"]["rtt"] == 0
    path = tmp_path / "benchmarks.md"
    document(summaries, str(path), str(tmp_path / "benchmarks.png"))
    text = path.read_text(encoding="utf-8")
    assert "## Local profile" in text and "## WAN profile" in text
    assert text.count("| connections: collection / module / uri |") == 2
    found = dict((name, (value, ok)) for name, value, ok in wan_verdicts(summaries["wan"], summaries["local"]))
    loop = found["WAN, loop: in-process opens 1 connection (uri: one per item)"]
    assert loop == ("1 (uri: %d)" % SMOKE["loop"], True)


def test_each_scaling_curve_at_one_small_point_costs_its_minimum(wan_bench, tmp_path):
    """Issue 49's curves (make bench runs them at three sizes each): one small point each, in the WAN profile, at
    the minimum of requests (the inventory: one for the databases, one per database's branches, one per PostgreSQL
    branch's role), with a peak memory measured, and their table on the page."""
    points = Curves(wan_bench, sizes=SMOKE_SIZES, log=lambda line: None, floor=False).run()  # counts, not times
    assert [(point["curve"], point["problems"]) for point in points] == [
        ("inventory", []), ("members", []), ("audit", [])]
    assert all(point["peak_kib"] > 10 * 1024 for point in points)  # an ansible-playbook's at least
    summary = dict(summarize(wan_bench), curves=points)
    assert dict((name, ok) for name, _value, ok in curve_verdicts(summary))[
        "WAN, scaling curves: requests at the minimum at every point"]
    assert curves_table(summary).count("\n| ") == len(points)
    path = tmp_path / "benchmarks.md"
    document(dict(wan=summary), str(path), str(tmp_path / "benchmarks.png"), str(tmp_path / "scaling.png"))
    text = path.read_text(encoding="utf-8")
    assert "## Scaling (WAN profile)" in text and "inventory: 4 databases x 3 branches" in text
