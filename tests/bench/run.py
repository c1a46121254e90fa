# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The benchmark: the collection against the same outcome written by hand with ansible.builtin.uri.

Starts the emulator on a free port (the test harness, tests/harness), and for each scenario
(scenarios.py) prepares the emulator's state (reset, fixtures), runs the collection's playbook
(in-process, then through the ordinary module path) and the hand-written uri playbook with
ansible-playbook several times, and records the wall time (median), the CPU time of
ansible-playbook and its workers, the HTTP requests the emulator served and the task runs
(runner.py). Writes docs/benchmarks.md and docs/benchmarks.png and prints the table (report.py).

    python tests/bench/run.py                 # the full benchmark (make bench)
    python tests/bench/run.py --runs 1 --slow-runs 1 --scenarios noop,list --no-write

Run it with the Python of a virtualenv that has ansible-core (and matplotlib for the
chart): ansible-playbook is taken from beside that Python.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # the benchmark's modules, and tests/ where the harness is

# pylint: disable=wrong-import-position
from harness import EMULATOR_PYTHON, ROOT, Ansible, Emulator, HarnessError  # noqa: E402
from report import chart, document, summarize, table, verdicts  # noqa: E402
from runner import Bench, loads  # noqa: E402
from scenarios import FULL, READY_DELAY, SCENARIOS, SMOKE, VARIANTS, BenchError  # noqa: E402


def measure(args):
    """Run the benchmark as the command line says: (summary, results)."""
    scenarios = args.scenarios.split(",") if args.scenarios else None
    workdir = tempfile.mkdtemp(prefix="planetscale-bench-")
    try:
        ansible = Ansible(os.path.join(workdir, "ansible"), results=False)
        with Emulator(os.path.join(workdir, "emulator.log"), python=args.emulator_python, port=args.port,
                      ready_delay=READY_DELAY) as emulator:
            print("emulator at %s; load %s" % (emulator.url, loads()))
            bench = Bench(emulator, ansible, sizes=SMOKE if args.smoke else FULL, scenarios=scenarios,
                          variants=args.variants.split(","), runs=args.runs, slow_runs=args.slow_runs,
                          budget=args.budget)
            bench.run()
        return summarize(bench), bench.results
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
    parser.add_argument("--emulator-python", default=EMULATOR_PYTHON, help="the emulator's Python (EMULATOR_PYTHON)")
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
    summary = summarize(bench)
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
        except (BenchError, HarnessError) as error:
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
