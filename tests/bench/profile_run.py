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
sys.path.insert(0, HERE)

import run as bench  # noqa: E402  pylint: disable=wrong-import-position

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
    parser.add_argument("scenario", choices=[cls.key for cls in bench.SCENARIOS])
    parser.add_argument("variant", choices=bench.VARIANTS)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--smoke", action="store_true", help="the smoke test's sizes")
    parser.add_argument("--emulator-python", default=os.environ.get(
        "BENCH_EMULATOR_PYTHON", os.path.join(bench.ROOT, ".venv", "emulator", "bin", "python")))
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--keep", help="keep the .prof files in this directory")
    args = parser.parse_args(argv)
    workdir = tempfile.mkdtemp(prefix="planetscale-profile-")
    outdir = args.keep or os.path.join(workdir, "profiles")
    os.makedirs(outdir, exist_ok=True)
    try:
        runner = bench.Runner(workdir)
        sizes = bench.SMOKE if args.smoke else bench.FULL
        with bench.Emulator(args.emulator_python, port=args.port) as emulator:
            harness = bench.Bench(emulator, runner, sizes=sizes, scenarios=[args.scenario], variants=[args.variant])
            scenario = harness.scenarios[0]
            extra_vars = dict(emulator.base_vars(), **scenario.prepare(emulator))
            run = runner.run(harness.playbook(scenario.playbook(args.variant)), extra_vars,
                             in_process=args.variant != "module", prefix=(sys.executable, __file__, "--inside", outdir))
        print("%s / %s: %.2fs wall, %d task runs (profiled, so slower than in the benchmark)" % (
            args.scenario, args.variant, run["wall"], run["task_runs"]))
        report(outdir, args.top, run["task_runs"])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
