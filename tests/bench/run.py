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

Two profiles (links.py): local (the emulator over plain HTTP on this machine) and wan (over TLS
behind a latency-injecting proxy, --delay seconds one way, which counts the TCP connections).
With --baseline REF, each profile also runs the collection's playbooks with the collection as it
was at the git commit REF (in-process and through the module path), side by side with this version.

    python tests/bench/run.py                 # the full benchmark, both profiles (make bench)
    python tests/bench/run.py --runs 1 --slow-runs 1 --scenarios noop,list --no-write
    python tests/bench/run.py --profiles wan --delay 0.05 --no-write
    python tests/bench/run.py --profiles local --baseline HEAD~10 --no-write

Run it with the Python of a virtualenv that has ansible-core (and matplotlib for the
chart): ansible-playbook is taken from beside that Python.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # the benchmark's modules, and tests/ where the harness is

# pylint: disable=wrong-import-position
from harness import EMULATOR_PYTHON, ROOT, Ansible, Emulator, HarnessError  # noqa: E402
from latency_proxy import DEFAULT_DELAY  # noqa: E402
from links import PROFILES, LocalLink, WanLink  # noqa: E402
from report import (baseline_table, baseline_verdicts, chart, curves_table, document, scaling_chart,  # noqa: E402
                    summarize, table, verdicts, wan_verdicts)
from curves import CURVES, SMOKE_SIZES, Curves, parse_sizes  # noqa: E402
from runner import Bench, loads  # noqa: E402
from scenarios import ALL_VARIANTS, BASELINE_VARIANTS, DEFAULT_BASELINE, FULL, READY_DELAY, SCENARIOS, SMOKE, VARIANTS, BenchError  # noqa: E402

BASELINE_PATHS = ("plugins", "meta", "galaxy.yml")  # what Ansible loads of a collection


def export_baseline(ref, workdir):
    """The collection as it was at the git commit ref, in a collections path under workdir: (path, commit)."""
    try:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--verify", "--quiet", ref + "^{commit}"],
                                check=True, capture_output=True, text=True).stdout.strip()
        archive = subprocess.run(["git", "-C", ROOT, "archive", "--format=tar", commit] + list(BASELINE_PATHS),
                                 check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        raise BenchError("The baseline %s is not a commit of this checkout's history (%s): fetch it, or give "
                         "another --baseline." % (ref, getattr(error, "stderr", None) or error)) from error
    collections = os.path.join(workdir, "baseline")
    target = os.path.join(collections, "ansible_collections", "planetscale", "cloud")
    os.makedirs(target)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    return collections, commit


def measure(args):
    """Run the benchmark as the command line says: ({profile: summary}, {profile: results})."""
    scenarios = [] if args.scenarios == "none" else args.scenarios.split(",") if args.scenarios else None
    curves = None if args.curves in (None, "", "none") else args.curves.split(",")
    summaries, results = {}, {}
    for profile in args.profiles.split(","):
        workdir = tempfile.mkdtemp(prefix="planetscale-bench-")
        try:
            ansible = Ansible(os.path.join(workdir, "ansible"), results=False)
            with Emulator(os.path.join(workdir, "emulator.log"), python=args.emulator_python, port=args.port,
                          ready_delay=READY_DELAY, tls=profile == "wan",
                          cert_dir=os.path.join(workdir, "certs") if profile == "wan" else None) as emulator:
                link = WanLink(emulator, delay=args.delay) if profile == "wan" else LocalLink(emulator)
                try:
                    print("%s profile: emulator at %s, playbooks at %s; load %s" % (
                        profile, emulator.url, link.api_url, loads()))
                    variants, baseline, commit = args.variants.split(","), None, None
                    if args.baseline not in (None, "", "none"):
                        baseline, commit = export_baseline(args.baseline, workdir)
                        variants += [v for v in BASELINE_VARIANTS if v.split("_", 1)[1] in variants]
                        print("baseline: the collection at %s (%s)" % (commit[:12], args.baseline))
                    bench = Bench(emulator, ansible, sizes=SMOKE if args.smoke else FULL, scenarios=scenarios,
                                  variants=variants, runs=args.runs, slow_runs=args.slow_runs,
                                  budget=args.budget, link=link, baseline=baseline)
                    bench.run()
                    if curves and profile == "wan":
                        sizes = SMOKE_SIZES if args.smoke else parse_sizes(args.curve_size)
                        print("scaling curves (WAN profile): %s" % ", ".join("%s %s" % (key, sizes[key])
                                                                             for key in curves))
                        points = Curves(bench, curves, sizes, runs=args.curve_runs).run()
                finally:
                    link.close()
            summaries[profile], results[profile] = summarize(bench), bench.results
            if curves and profile == "wan":
                summaries[profile]["curves"] = points
            if commit:
                summaries[profile]["baseline"] = commit
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    return summaries, results


# Command line ------------------------------------------------------------------------------------


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--runs", type=int, default=9, help="runs of the in-process variants and the floor")
    parser.add_argument("--slow-runs", type=int, default=3, help="runs of the module path and the uri variant")
    parser.add_argument("--budget", type=float, default=720,
                        help="seconds (per profile) after which no repeat run starts")
    parser.add_argument("--scenarios", help="comma-separated keys ('none': only the curves): " + ",".join(
        cls.key for cls in SCENARIOS))
    parser.add_argument("--curves", default=",".join(cls.key for cls in CURVES),
                        help="the scaling curves of the WAN profile, comma-separated ('none': not): %(default)s")
    parser.add_argument("--curve-size", action="append", metavar="CURVE=N,N,N",
                        help="a curve's sizes (repeatable), instead of inventory=10,100,1000 members=500,5000,50000 "
                             "audit=1000,10000,100000")
    parser.add_argument("--curve-runs", type=int, default=1, help="runs of each point of a curve")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated: " + ",".join(VARIANTS))
    parser.add_argument("--baseline", metavar="REF", default=DEFAULT_BASELINE,
                        help="a git commit of this checkout: the local profile also runs the collection as it was "
                             "there (default %(default).12s; 'none': not)")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (the test suite's)")
    parser.add_argument("--profiles", default=",".join(PROFILES), help="comma-separated: " + ",".join(PROFILES))
    parser.add_argument("--delay", type=float, default=DEFAULT_DELAY, help="the WAN profile's one-way delay, seconds")
    parser.add_argument("--emulator-python", default=EMULATOR_PYTHON, help="the emulator's Python (EMULATOR_PYTHON)")
    parser.add_argument("--port", type=int, default=0, help="emulator port (0: a free one)")
    parser.add_argument("--out", default=os.path.join(ROOT, "docs"), help="where benchmarks.md/png go")
    parser.add_argument("--json", default=os.path.join(ROOT, "build", "bench", "results.json"))
    parser.add_argument("--no-write", action="store_true", help="print the table only")
    parser.add_argument("--from-json", metavar="PATH", help="report the runs a previous --json saved; run nothing")
    return parser.parse_args(argv)


def load_summary(path):
    """The summaries of the runs a previous run saved with --json, computed by this version of the report:
    ({profile: summary}, {profile: results})."""
    with open(path, encoding="utf-8") as handle:
        saved = json.load(handle)
    profiles = saved["profiles"] if "profiles" in saved else dict(local=saved)
    summaries, results = {}, {}
    for profile, found in profiles.items():
        keys = [tuple(key.split("/", 1)) for key in found["results"]]
        bench = Bench(None, None, sizes=found["sizes"], scenarios=set(k for k, _v in keys if k != "floor"),
                      variants=[v for v in ALL_VARIANTS if any(variant == v for k, variant in keys if k != "floor")])
        bench.link = _SavedLink(profile, found.get("rtt", 0.0))
        bench.results = dict((tuple(key.split("/", 1)), runs) for key, runs in found["results"].items())
        summary = summarize(bench)
        summary.update((name, found[name]) for name in ("load", "machine", "duration", "runs", "baseline", "curves")
                       if name in found)
        summaries[profile], results[profile] = summary, bench.results
    return summaries, results


class _SavedLink:
    def __init__(self, name, rtt):
        self.name, self.rtt = name, rtt


def main(argv=None):
    args = parse_args(argv)
    if args.from_json:
        summaries, results = load_summary(args.from_json)
        args.json = None
    else:
        try:
            summaries, results = measure(args)
        except (BenchError, HarnessError) as error:
            print("benchmark failed: %s" % error, file=sys.stderr)
            return 1
    found = []
    for profile, summary in summaries.items():
        print("\n%s profile\n\n%s" % (profile, table(summary)))
        if summary.get("curves"):
            print("\nscaling curves\n\n%s" % curves_table(summary))
        if summary.get("baseline"):
            print("\nthis version against %s\n\n%s" % (summary["baseline"][:12], baseline_table(summary)))
        found += (verdicts(summary) if profile == "local" else wan_verdicts(summary, summaries.get("local")))
        found += baseline_verdicts(summary, profile)
    print()
    for name, value, ok in found:
        print("%-4s %s: %s" % ("ok" if ok else "MISS", name, value))
    if args.json:
        os.makedirs(os.path.dirname(args.json), exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(dict(profiles=dict((profile, dict(summary, results={"%s/%s" % key: runs for key, runs in
                                                                          results[profile].items()}))
                                         for profile, summary in summaries.items())), handle, indent=1)
    if not args.no_write:
        os.makedirs(args.out, exist_ok=True)
        path_md, path_png = os.path.join(args.out, "benchmarks.md"), os.path.join(args.out, "benchmarks.png")
        path_scaling = None
        chart(summaries, path_png)
        if summaries.get("wan", {}).get("curves"):
            path_scaling = os.path.join(args.out, "benchmarks-scaling.png")
            scaling_chart(summaries["wan"], path_scaling)
        document(summaries, path_md, path_png, path_scaling)
        print("\nwrote %s" % ", ".join(os.path.relpath(p) for p in (path_md, path_png, path_scaling) if p))
    return 0


if __name__ == "__main__":
    sys.exit(main())
