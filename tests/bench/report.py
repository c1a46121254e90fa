# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark's report: the summary of the runs (medians, ratios, per-task cost), the tables,
the targets and whether they are met, the chart (docs/benchmarks.png) and the page
(docs/benchmarks.md)."""

from __future__ import annotations

import os
import platform
import statistics

from scenarios import DEFAULT_BASELINE, FLOOR_PLAYBOOKS, PARALLEL_PAGES, READY_DELAY, VARIANT_LABELS, VARIANTS

# The summary -------------------------------------------------------------------------------------


def per_task_cost(bench, key):
    """Seconds per task of a one-request or debug playbook, less the fixed cost of a run (the empty play)."""
    total, empty = bench.median(key), bench.median(("floor", "empty"))
    return None if total is None or empty is None else (total - empty) / bench.sizes["repeats"]


def rows(bench):
    rows = []
    for scenario in bench.scenarios:
        key = scenario.key
        expected = scenario.expected("in_process")
        row = dict(number=scenario.number, key=key, title=scenario.title, minimum=expected.total,
                   exact=not expected.polls)
        for variant in bench.variants:
            row[variant] = dict(wall=bench.median((key, variant)), cpu=bench.median((key, variant), "cpu"),
                                requests=bench.last((key, variant), "requests"),
                                methods=bench.last((key, variant), "methods"),
                                task_runs=bench.last((key, variant), "task_runs"),
                                connections=bench.last((key, variant), "connections"),
                                runs=len(bench.results.get((key, variant), ())))
        row["ratio"] = _ratio(row.get("in_process", {}).get("wall"), row.get("uri", {}).get("wall"))
        row["module_ratio"] = _ratio(row.get("module", {}).get("wall"), row.get("uri", {}).get("wall"))
        row["floor"] = round_trip_floor(bench, scenario, row.get("in_process", {}))
        row["floor_ratio"] = _ratio(row.get("in_process", {}).get("wall"), row["floor"])
        # the least in-process/uri any client could reach with the same requests and task runs
        row["floor_uri"] = _ratio(row["floor"], row.get("uri", {}).get("wall"))
        rows.append(row)
    return rows


def round_trip_floor(bench, scenario, run):
    """What an in-process run cannot go below: Ansible's dispatch floor (the empty play, and the debug task's cost
    per task run) and the round trips its requests need one after another (one per request, except the pages of a
    list read side by side), at the profile's RTT (0 in the local profile)."""
    empty, per_task = bench.median(("floor", "empty")), per_task_cost(bench, ("floor", "debug"))
    if empty is None or per_task is None or run.get("requests") is None or run.get("task_runs") is None:
        return None
    return empty + run["task_runs"] * per_task + scenario.round_trips("in_process", run["requests"]) * rtt_of(bench)


def rtt_of(bench):
    return getattr(bench.link, "rtt", 0.0) if getattr(bench, "link", None) is not None else 0.0


def summarize(bench):
    floor = dict((name, dict(wall=bench.median(("floor", name)), cpu=bench.median(("floor", name), "cpu"),
                             runs=len(bench.results.get(("floor", name), ()))))
                 for name in FLOOR_PLAYBOOKS)
    per_task = dict(debug=per_task_cost(bench, ("floor", "debug")))
    per_task.update((variant, per_task_cost(bench, ("one_request", variant))) for variant in bench.variants)
    runs = dict((variant, sorted(set(len(bench.results.get((s.key, variant), ())) for s in bench.scenarios)))
                for variant in bench.variants)
    return dict(rows=rows(bench), floor=floor, per_task=per_task, sizes=bench.sizes, runs=runs,
                load=_spread(bench.loads), machine=machine(), duration=bench.duration(),
                profile=getattr(bench.link, "name", "local"), rtt=rtt_of(bench))


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


# Reporting -------------------------------------------------------------------------------------------


def _s(value, digits=2):
    return "–" if value is None else "%.*f" % (digits, value)


def _ms(value):
    return "–" if value is None else "%.0f ms" % (value * 1000)


def table(summary):
    """The results of one profile as Markdown tables (the same text is printed and written)."""
    lines = [
        "| # | scenario | collection (in-process) | floor | in-process/floor | uri | in-process/uri | floor/uri "
        "| collection (module path) | module/uri | requests: collection / module / uri "
        "| connections: collection / module / uri | task runs: collection / uri |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in summary["rows"]:
        inp, mod, uri = (row.get(v, {}) for v in VARIANTS)
        lines.append("| %d | %s | %s s | %s s | %s | %s s | **%s** | %s | %s s | %s | %s / %s / %s | %s / %s / %s "
                     "| %s / %s |" % (
                         row["number"], row["title"], _s(inp.get("wall")), _s(row.get("floor")),
                         _s(row.get("floor_ratio")), _s(uri.get("wall")), _s(row["ratio"]), _s(row.get("floor_uri")),
                         _s(mod.get("wall")),
                         _s(row["module_ratio"]), _n(inp.get("requests")), _n(mod.get("requests")),
                         _n(uri.get("requests")), _n(inp.get("connections")), _n(mod.get("connections")),
                         _n(uri.get("connections")), _n(inp.get("task_runs")), _n(uri.get("task_runs"))))
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


def baseline_table(summary):
    """This version against the earlier one (run.py --baseline), scenario by scenario, in one run."""
    lines = [
        "| # | scenario | in-process: now | earlier | now/earlier | module path: now | earlier | now/earlier "
        "| requests: now / earlier | connections in-process: now / earlier |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in summary["rows"]:
        inp, base, mod, base_mod = (row.get(v, {}) for v in ("in_process", "base_in_process", "module", "base_module"))
        lines.append("| %d | %s | %s s | %s s | **%s** | %s s | %s s | **%s** | %s / %s | %s / %s |" % (
            row["number"], row["title"], _s(inp.get("wall")), _s(base.get("wall")),
            _s(_ratio(inp.get("wall"), base.get("wall"))), _s(mod.get("wall")), _s(base_mod.get("wall")),
            _s(_ratio(mod.get("wall"), base_mod.get("wall"))), _n(inp.get("requests")), _n(base.get("requests")),
            _n(inp.get("connections")), _n(base.get("connections"))))
    return "\n".join(lines)


NOT_WORSE = 1.05  # now/earlier: run-to-run spread of the medians on an idle machine is a few per cent


def baseline_verdicts(summary, profile="local"):
    """Issues 22 and 36: a profile's figures do not get worse (this version against the earlier one, one run)."""
    found = []
    if not summary.get("baseline"):
        return found
    for row in summary["rows"]:
        for now, earlier, label in (("in_process", "base_in_process", "in-process"), ("module", "base_module",
                                                                                      "module path")):
            ratio = _ratio(row.get(now, {}).get("wall"), row.get(earlier, {}).get("wall"))
            if ratio is not None:
                found.append(("%s, scenario %d: %s no slower than the earlier version %s (now/earlier <= %.2f)" % (
                    profile, row["number"], label, summary["baseline"][:12], NOT_WORSE), "%.2f" % ratio,
                    ratio <= NOT_WORSE))
    return found


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


def wan_verdicts(wan, local=None):
    """The WAN profile's targets (issue 22), each with the measured value and whether it is met."""
    found, by_key = [], dict((row["key"], row) for row in wan["rows"])
    loop = by_key.get("loop", {})
    inp, uri = loop.get("in_process", {}), loop.get("uri", {})
    if inp.get("connections") is not None:
        found.append(("WAN, loop: in-process opens 1 connection (uri: one per item)", "%s (uri: %s)" % (
            inp["connections"], _n(uri.get("connections"))), inp["connections"] == 1))
    if loop.get("floor_ratio") is not None:
        found.append(("WAN, loop: in-process within 1.3x of the round-trip floor", "%.2f" % loop["floor_ratio"],
                      loop["floor_ratio"] <= 1.3))
    one = by_key.get("one_request", {})
    if one.get("in_process", {}).get("connections") is not None:
        found.append(("WAN, one request: in-process opens 1 connection for its %s tasks (kept across tasks)"
                      % _n(one["in_process"].get("task_runs")), "%s (uri: %s)" % (
                          one["in_process"]["connections"], _n(one.get("uri", {}).get("connections"))),
                      one["in_process"]["connections"] == 1))
    if one.get("floor_ratio") is not None:
        found.append(("WAN, one request: in-process within 1.3x of the round-trip floor", "%.2f" % one["floor_ratio"],
                      one["floor_ratio"] <= 1.3))
    keys = by_key.get("two_keys", {}).get("in_process", {})
    if keys.get("connections") is not None:
        found.append(("WAN, two keys: in-process opens 2 connections, one per key, never one shared",
                      "%d" % keys["connections"], keys["connections"] == 2))
    listed, local_rows = by_key.get("list", {}), dict((row["key"], row) for row in (local or {}).get("rows", ()))
    wall, local_wall = listed.get("in_process", {}).get("wall"), local_rows.get("list", {}).get("in_process", {}).get("wall")
    if wall is not None and local_wall is not None and wan.get("rtt"):
        trips = (wall - local_wall) / wan["rtt"]
        found.append(("WAN, list: at most 10 round trips beyond the local profile's time", "%.1f" % trips,
                      trips <= 10))
    for row in wan["rows"]:
        if row["ratio"] is not None:
            found.append(("WAN, scenario %d: in-process at most 0.1x of uri's wall time" % row["number"],
                          "%.2f (the floor: %s)" % (row["ratio"], _s(row.get("floor_uri"))), row["ratio"] <= 0.1))
    return found + curve_verdicts(wan)


# The scaling curves (issue 49; tests/bench/curves.py) ----------------------------------------------

FLAT = 1.5  # the cost of an item more at the largest size, at most this times that at the size before


def curve_rows(summary):
    """The points of the curves (the medians of a point's runs) with their floors and cost per item, by curve and
    size."""
    empty, per_task, rtt = summary["floor"]["empty"]["wall"], summary["per_task"].get("debug"), summary.get("rtt", 0)
    grouped = {}
    for point in summary.get("curves") or ():
        grouped.setdefault((point["curve"], point["size"]), []).append(point)
    rows = []
    for (curve, size), points in grouped.items():
        row = dict(points[-1], wall=statistics.median(p["wall"] for p in points),
                   peak_kib=statistics.median(p["peak_kib"] for p in points), runs=len(points))
        floor = None
        if empty is not None and per_task is not None:
            floor = empty + row["task_runs"] * per_task + row["round_trips"] * rtt
        row.update(floor=floor, floor_ratio=_ratio(row["wall"], floor),
                   per_item=(row["wall"] - empty) / row["items"] if empty is not None and row["items"] else None)
        rows.append(row)
    return rows


def marginal(rows, field):
    """The cost of an item more between each point of a curve and the next: [(items, cost per item)]."""
    return [(b["items"], (b[field] - a[field]) / float(b["items"] - a["items"])) for a, b in zip(rows, rows[1:])
            if b["items"] > a["items"]]


def by_curve(rows):
    curves = {}
    for row in rows:
        curves.setdefault(row["curve"], []).append(row)
    return dict((key, sorted(found, key=lambda row: row["items"])) for key, found in curves.items())


def curves_table(summary):
    lines = ["| curve | items | wall | floor | wall/floor | requests (minimum) | round trips | time per item "
             "| peak memory | connections |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for key, rows in by_curve(curve_rows(summary)).items():
        for row in rows:
            lines.append("| %s | {:,} %s | %s s | %s s | %s | %s (%s) | %s | %s | %.0f MB | %s |".format(
                row["items"]) % (row["title"], row["unit"], _s(row["wall"]), _s(row["floor"]), _s(row["floor_ratio"]),
                                 _n(row["requests"]), _n(row["minimum"]), _n(row["round_trips"]),
                                 "–" if row["per_item"] is None else "%.2f ms" % (row["per_item"] * 1000),
                                 row["peak_kib"] / 1024.0, _n(row.get("connections"))))
    return "\n".join(lines)


def curve_verdicts(summary):
    """Issue 49's targets for the curves: each with the measured value and whether it is met."""
    found, curves = [], by_curve(curve_rows(summary))
    points = [row for rows in curves.values() for row in rows]
    if points:
        exact = [row for row in points if row["requests"] == row["minimum"]]
        found.append(("WAN, scaling curves: requests at the minimum at every point", "%d of %d" % (
            len(exact), len(points)), len(exact) == len(points)))
    inventory = curves.get("inventory")
    if inventory and inventory[-1]["floor_ratio"] is not None:
        largest = inventory[-1]
        found.append(("WAN, %s: within 1.3x of its floor (round trips with the parallelism used)" % largest["title"],
                      "%.2f" % largest["floor_ratio"], largest["floor_ratio"] <= 1.3))
    for key, rows in curves.items():
        if len(rows) < 3:
            continue  # with two points, the cost of an item more has nothing to be compared with
        steps = marginal(rows, "wall")
        found.append(("WAN, %s curve: time per item flat (an item more at the largest size costs at most %.1fx what "
                      "it costs at the size before)" % (key, FLAT), "%.2f ms then %.2f ms" % (
                          steps[-2][1] * 1000, steps[-1][1] * 1000), steps[-1][1] <= FLAT * max(steps[-2][1], 0)))
        steps = marginal(rows, "peak_kib")
        found.append(("WAN, %s curve: memory grows no faster than the result (KiB an item more, at most %.1fx the "
                      "size before's)" % (key, FLAT), "%.2f then %.2f" % (steps[-2][1], steps[-1][1]),
                      steps[-1][1] <= FLAT * max(steps[-2][1], 0.01)))
    return found


CURVE_COLORS = dict(inventory="#2a9d8f", members="#e76f51", audit="#264653")


def scaling_chart(summary, path):
    """Time per item and peak memory against the items of each curve (log scales)."""
    import matplotlib  # pylint: disable=import-outside-toplevel

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel

    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    for key, rows in by_curve(curve_rows(summary)).items():
        items, color = [row["items"] for row in rows], CURVE_COLORS.get(key, "#8d99ae")
        left.plot(items, [(row["per_item"] or 0) * 1000 for row in rows], marker="o", color=color,
                  label=key)
        floors = [((row["floor"] - summary["floor"]["empty"]["wall"]) / row["items"] * 1000)
                  if row["floor"] is not None else None for row in rows]
        if None not in floors:
            left.plot(items, floors, linestyle="--", color=color, alpha=0.6, label="%s: its floor" % key)
        right.plot(items, [row["peak_kib"] / 1024.0 for row in rows], marker="o", color=color, label=key)
    for axis in (left, right):
        axis.set_xscale("log")
        axis.set_xlabel("items (log scale)")
        axis.legend(frameon=False, fontsize=8)
    left.set_yscale("log")
    left.set_ylabel("ms per item, less the empty play (log scale)")
    left.set_title("Time per item, WAN profile (%.0f ms round trip)" % (summary.get("rtt", 0) * 1000))
    right.set_ylabel("peak resident memory of the controller's largest process, MB")
    right.set_title("Peak memory")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


SCALING_INTRO = """## Scaling (WAN profile)

The same work at sizes ten times apart (`tests/bench/curves.py`), each point one in-process run of
`ansible-playbook`: the branches inventory of N databases of {branches} branches (read in a play that checks it
holds every branch; the databases' branches and the PostgreSQL branches' default roles are read {parallel_pages} at a
time), `team_member_info` of a team of N members (the pages after the first {parallel_pages} at a time), and
`audit_log_info` with `since: 1d` over N events of the last day, older ones behind them (a cursor list: one page
after another, to the first older event). The floor counts the round trips with that parallelism. Time per item is
the wall time less the empty play, over the items; peak memory is that of the controller's largest process
(`ansible-playbook`, which holds the inventory, or the task's worker, which holds its result), from
`tests/bench/peak.py`.{sizes_note}

"""


COLORS = dict(in_process="#2a9d8f", module="#e9c46a", uri="#e76f51", debug="#8d99ae")
PER_TASK_LABELS = dict(debug="debug\n(the floor)", in_process="user_info\nin-process", module="user_info\nmodule path",
                       uri="uri GET")


def profiles_of(summaries):
    """{profile: summary}: one summary (the local profile) or several by profile."""
    return dict(local=summaries) if "rows" in summaries else summaries


def chart(summaries, path):
    import matplotlib  # pylint: disable=import-outside-toplevel
    import matplotlib.ticker  # pylint: disable=import-outside-toplevel

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel

    profiles = profiles_of(summaries)
    shown = [name for name in ("local", "wan") if name in profiles]
    figure, axes = plt.subplots(1, len(shown) + 1, figsize=(6.5 * len(shown) + 4, 5.4),
                                gridspec_kw=dict(width_ratios=[3] * len(shown) + [1.5]))
    width = 0.27
    for left, name in zip(axes, shown):
        summary = profiles[name]
        rows = summary["rows"]
        for index, variant in enumerate(VARIANTS):
            values = [row.get(variant, {}).get("wall") or 0 for row in rows]
            bars = left.bar([n + (index - 1) * width for n in range(len(rows))], values, width,
                            label=VARIANT_LABELS[variant], color=COLORS[variant])
            left.bar_label(bars, fmt="%.1f", fontsize=7, padding=1)
        floors = [row.get("floor") for row in rows]
        left.scatter([n - width for n, value in enumerate(floors) if value is not None],
                     [value for value in floors if value is not None], marker="_", s=300, color="#222222",
                     label="round-trip floor", zorder=3)
        left.set_xticks(range(len(rows)))
        left.set_xticklabels(["%d. %s" % (row["number"], row["key"].replace("_", " ")) for row in rows], fontsize=8)
        left.set_ylabel("wall time of the playbook, s (median)")
        left.set_title("%s profile%s" % (name, ": TLS, %.0f ms round trip" % (summary["rtt"] * 1000)
                                         if summary.get("rtt") else ": plain HTTP on this machine"))
        left.legend(frameon=False, fontsize=8)
    right = axes[-1]
    per_task = profiles[shown[0]]["per_task"]
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
    right.set_title("Per-task cost (scenario 5, %s)" % shown[0])
    summary = profiles[shown[0]]
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

Two profiles, run one after the other on the same machine:

- **local**: the emulator on this machine over plain HTTP, where a round trip costs about a
  millisecond;
- **WAN**: the emulator over TLS behind a TCP proxy on localhost that delays every byte by
  {delay_ms} one way (`tests/bench/latency_proxy.py`), so a round trip costs {rtt_ms}, as users reach
  the platform over the internet; a new connection's first bytes wait one round trip more (the TCP
  handshake, which the kernel completes at once on localhost), so a new connection costs its TCP and
  TLS handshakes as over a real link. The proxy counts the TCP connections each run opens.

The **floor** beside each figure is what the in-process run cannot go below: the empty play,
plus the debug task's cost for each of its task runs (Ansible's dispatch), plus one round trip
per request (for the list: the first page, then one round trip per {parallel_pages} pages read side by side).
A new connection costs two round trips more than that (TCP, then TLS), which is what
keeping connections across a loop's items saves.

To reproduce: `make bench` (the full run, about 25 minutes on 2 cores; rewrites this page and
the chart; `BENCH_BASELINE=<commit>` picks the earlier version the local profile is compared
with), or `.venv/bench/bin/python tests/bench/run.py --profiles wan --delay 0.025 --no-write`
for one profile without writing. The WAN profile then measures the scaling curves (below; `--curves none`
skips them, `--curve-size inventory=10,100` sets a curve's sizes). Run it on an otherwise idle machine.

Machine: {cores} cores, {system}, Python {python}, ansible-core {ansible_core}. The run took
{duration}. The 1-minute load average was {load}: {load_meaning}

"""

BASELINE_WHAT = {DEFAULT_BASELINE: " (before connections were kept across a loop's items and lists read side by side)"}

BASELINE_INTRO = """\
### {title}: this version against the earlier one

The same collection playbooks, in the same run, with the collection as it was at `{commit}`{what}: each
earlier-version run follows its counterpart's in the order of the runs, so both meet the same
load. A ratio above 1 would mean this version got slower.

"""

DOC_NOTES = """
## What the floor says about the targets

The **floor/uri** column is the ratio to uri that a client would reach if a run cost nothing but
Ansible's dispatch and its requests' round trips, one after another: no client that makes
those requests in those tasks can get below it. In the WAN profile it lies above 0.1 for every
scenario whose work is requests one after another, so the target that asks every in-process
scenario for at most a tenth of uri's time cannot be met there by this or any client; in-process
runs sit close to their floor instead (the in-process/floor column). A uri task pays a module
run, a new connection (its TCP and TLS handshakes) and its request; the collection's task
in-process pays the dispatch and its request's round trip. At a tenth, its request would have to
cost less than a round trip. Every task runs in a worker process of its own (Ansible starts one
per task); the collection's connections outlive them in a keeper process of the run
(`planetscale_keep_connections`), so scenario 5's 50 tasks share one connection and its
handshakes, and each task still pays its request's round trip.

## Where the time goes

Per task in scenario 5 (from the table above): the dispatch floor, `ansible.builtin.debug`,
costs {debug}; the collection's task, in-process, {in_process}; a task that runs a module
(uri, or the collection's module path) {uri}. That last cost is the one in-process removes:
Ansible writes an AnsiballZ payload and starts a new Python that unpacks it and imports
`ansible.module_utils` (compiled from the payload every time), whatever the module then does.

Profiles (`python tests/bench/profile_run.py SCENARIO VARIANT` runs one scenario with
cProfile in `ansible-playbook` and in every worker process) show, for ansible-core 2.21:

- **In-process, one request** (scenario 5, WAN; timed with clocks around each phase, as
  cProfile inflates small calls): a task pays the dispatch `debug` pays, its request's round
  trip (50 ms, and about 3 ms more in the latency proxy, TLS, the keeper's relay and the
  emulator), ansible-core templating the play's four `module_defaults` values (about 4 ms: each
  worker compiles them as Jinja templates again) and the collection's own code, about 5 ms
  (argument validation, the session, the keeper's socket). `ansible-playbook`'s own process
  does once per run what each worker would otherwise do again (`prepare()` in
  `plugins/plugin_utils/in_process.py`: the module's import, ansible-core's filter and test
  plugins, requests' first calls), about 12 ms a task. Credentials from the environment
  (`PLANETSCALE_SERVICE_TOKEN_ID`, `PLANETSCALE_SERVICE_TOKEN`) instead of templated
  `module_defaults` avoid the templating.
- **List** (scenario 4, WAN, profiled with `profile_run.py list in_process --wan`): the 50
  pages take about 1.5 s of the worker's time, little of it the collection's own. The time over
  the floor is Ansible handling a 4 MB result (5,000 members): registering it
  (`finalize_registered_values` walks every value, two thirds of the worker's time) and its
  conversion in the main process for the callbacks (`transform_to_native_types`), both
  ansible-core's, in proportion to the result. The collection's share was masking the `no_log`
  values in it (`remove_values` copies every value, 0.7 s, which the module path pays as well,
  in `exit_json`); a result whose JSON text holds none of them is now answered as it is, after
  a check that costs about a tenth of that (issue 49).
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


def document(summaries, path_md, path_png, path_scaling=None):
    profiles = profiles_of(summaries)
    summary = profiles.get("local") or list(profiles.values())[0]
    wan = profiles.get("wan")
    load = summary["load"] or {}
    short = dict(in_process="in-process", module="module path", uri="uri", base_in_process="earlier in-process",
                 base_module="earlier module path")
    runs = ", ".join("%s %s" % (short[variant], "/".join(map(str, counts))) for variant, counts in summary["runs"].items())
    runs += ", the floor %d" % summary["floor"]["empty"]["runs"]
    duration = sum(p.get("duration") or 0 for p in profiles.values())
    rtt = wan["rtt"] if wan else 0.05
    text = DOC_INTRO.format(runs=runs, ready_delay=READY_DELAY,
                            duration="%d min %02d s" % divmod(int(duration), 60) if duration else "–",
                            load="%s to %s, median %s" % (
                                _s(load.get("min")), _s(load.get("max")), _s(load.get("median"))),
                            load_meaning=load_meaning(load.get("median"), summary["machine"].get("cores")),
                            delay_ms=_ms(rtt / 2), rtt_ms=_ms(rtt), parallel_pages=PARALLEL_PAGES,
                            **summary["machine"])
    for name, title in (("local", "Local profile"), ("wan", "WAN profile")):
        if name in profiles:
            text += "## %s\n\n%s\n\n" % (title, table(profiles[name]))
        if profiles.get(name, {}).get("baseline"):
            commit = profiles[name]["baseline"]
            what = BASELINE_WHAT.get(commit, "")
            text += BASELINE_INTRO.format(title=title, commit=commit[:12], what=what) + baseline_table(profiles[name])
            text += "\n\n"
    text += "![Wall time per scenario, both profiles, and per-task cost](%s)\n\n" % os.path.basename(path_png)
    if wan and wan.get("curves"):
        from curves import BRANCHES, SIZES  # pylint: disable=import-outside-toplevel

        measured = dict((key, tuple(row["size"] for row in rows)) for key, rows in by_curve(curve_rows(wan)).items())
        short = ["%s %s" % (key, ", ".join("{:,}".format(n) for n in sizes)) for key, sizes in sorted(
            measured.items()) if sizes != SIZES.get(key)]
        note = (" Measured at fewer or other sizes than the full run's (`--curve-size`): %s." % "; ".join(short)
                if short else "")
        text += SCALING_INTRO.format(branches=BRANCHES, parallel_pages=PARALLEL_PAGES, sizes_note=note)
        text += curves_table(wan) + "\n\n"
        if path_scaling:
            text += "![Time per item and peak memory of each curve](%s)\n\n" % os.path.basename(path_scaling)
    found = verdicts(summary) + baseline_verdicts(summary)
    if wan:
        found += baseline_verdicts(wan, "wan") + wan_verdicts(wan, profiles.get("local"))
    text += "## Targets\n\n| target | measured | met |\n|---|---|---|\n"
    text += "".join("| %s | %s | %s |\n" % (name, value, "yes" if ok else "**no**") for name, value, ok in found)
    per_task = summary["per_task"]
    text += DOC_NOTES.format(debug=_ms(per_task.get("debug")), in_process=_ms(per_task.get("in_process")),
                             uri=_ms(per_task.get("uri")))
    with open(path_md, "w", encoding="utf-8") as handle:
        handle.write(text)
