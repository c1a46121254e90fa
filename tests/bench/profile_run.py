# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Profile one benchmark scenario: cProfile in ansible-playbook's main process and in every worker.

A task runs in a worker process forked from ansible-playbook, so a profiler of the main
process alone never sees a task's own work. This starts the emulator, prepares the
scenario as the benchmark does, runs the playbook once with both profiled, and prints where
the time goes: per task in the workers, and in the main process.

    python tests/bench/profile_run.py one_request in_process
    python tests/bench/profile_run.py noop module --top 40
    python tests/bench/profile_run.py one_request in_process --wan
"""

from __future__ import annotations

import argparse
import cProfile
import glob
import os
import pstats
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # the benchmark's modules, and tests/ where the harness is

# pylint: disable=wrong-import-position
from harness import EMULATOR_PYTHON, Ansible, Emulator  # noqa: E402
from links import LocalLink, WanLink  # noqa: E402
from runner import Bench, measure_once  # noqa: E402
from scenarios import FULL, READY_DELAY, SCENARIOS, SMOKE, VARIANTS  # noqa: E402

PROFILES = []  # the main process's profiler, which a forked worker inherits and must stop


def inside(outdir, argv):
    """Run ansible-playbook (argv) in this process, with every worker profiled into outdir."""
    from ansible.executor.process import worker  # pylint: disable=import-outside-toplevel

    original = worker.WorkerProcess.run

    def profiled_run(self):
        for inherited in PROFILES:
            inherited.disable()
        profile = cProfile.Profile()
        profile.enable()
        try:
            return original(self)
        finally:
            profile.disable()
            path = os.path.join(outdir, "worker-%d.prof" % os.getpid())
            profile.dump_stats(path + ".part")
            os.rename(path + ".part", path)

    worker.WorkerProcess.run = profiled_run
    sys.argv = list(argv)
    from ansible.cli.playbook import main  # pylint: disable=import-outside-toplevel

    profile = cProfile.Profile()
    PROFILES.append(profile)
    profile.enable()
    try:
        main()
    finally:
        profile.disable()
        profile.dump_stats(os.path.join(outdir, "main.prof"))


def report(outdir, top, tasks):
    workers = sorted(glob.glob(os.path.join(outdir, "worker-*.prof")))
    print("\n== %d worker processes (one per task), cumulative seconds per task ==" % len(workers))
    stats = pstats.Stats(*workers)
    _print(stats, top, max(len(workers), 1))
    print("\n== main process (%d tasks), cumulative seconds per task ==" % tasks)
    _print(pstats.Stats(os.path.join(outdir, "main.prof")), top, max(tasks, 1))


def _print(stats, top, divisor):
    rows = []
    for (filename, line, name), (_cc, calls, _tt, cumulative, _callers) in stats.stats.items():
        rows.append((cumulative / divisor, calls / float(divisor), _where(filename, line, name)))
    rows.sort(reverse=True)
    print("%10s %10s  %s" % ("s/task", "calls/task", "function"))
    for cumulative, calls, where in rows[:top]:
        print("%10.4f %10.1f  %s" % (cumulative, calls, where))


def _where(filename, line, name):
    for marker in ("site-packages/", "ansible_collections/", "lib/python3"):
        if marker in filename:
            filename = filename.split(marker, 1)[1]
            break
    return "%s:%s(%s)" % (filename, line, name)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--inside":
        inside(argv[1], argv[2:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("scenario", choices=[cls.key for cls in SCENARIOS])
    parser.add_argument("variant", choices=VARIANTS)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--smoke", action="store_true", help="the smoke test's sizes")
    parser.add_argument("--emulator-python", default=EMULATOR_PYTHON, help="the emulator's Python (EMULATOR_PYTHON)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--keep", help="keep the .prof files in this directory")
    parser.add_argument("--wan", action="store_true", help="the WAN profile: TLS behind the latency proxy")
    args = parser.parse_args(argv)
    workdir = tempfile.mkdtemp(prefix="planetscale-profile-")
    outdir = args.keep or os.path.join(workdir, "profiles")
    os.makedirs(outdir, exist_ok=True)
    try:
        ansible = Ansible(os.path.join(workdir, "ansible"), results=False)
        sizes = SMOKE if args.smoke else FULL
        with Emulator(os.path.join(workdir, "emulator.log"), python=args.emulator_python, port=args.port,
                      ready_delay=READY_DELAY, tls=args.wan,
                      cert_dir=os.path.join(workdir, "certs") if args.wan else None) as emulator:
            link = WanLink(emulator) if args.wan else LocalLink(emulator)
            try:
                bench = Bench(emulator, ansible, sizes=sizes, scenarios=[args.scenario], variants=[args.variant],
                              link=link)
                scenario = bench.scenarios[0]
                extra_vars = dict(bench.base_vars(), **scenario.prepare(emulator))
                run = measure_once(ansible, bench.playbook(scenario.playbook(args.variant)), extra_vars,
                                   in_process=args.variant != "module",
                                   prefix=(sys.executable, __file__, "--inside", outdir))
            finally:
                link.close()
        print("%s / %s: %.2fs wall, %d task runs (profiled, so slower than in the benchmark)" % (
            args.scenario, args.variant, run["wall"], run["task_runs"]))
        report(outdir, args.top, run["task_runs"])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
