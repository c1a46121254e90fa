# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The harness from the command line (with PYTHONPATH=tests):

    python -m harness emulator run  [OPTIONS]                 # in the foreground, until Ctrl-C (make emulator)
    python -m harness emulator exec [OPTIONS] -- COMMAND ...  # with an emulator, run COMMAND, stop it

exec starts the emulator on a free port, tells where it is and where its log goes, optionally
writes the integration targets' configuration (--integration-config), runs COMMAND with
EMULATOR_URL set, stops the emulator and exits with COMMAND's exit code (hack/integration.sh).
With --watch-secrets, COMMAND's output (an ansible-test integration run at -vvvv) is also searched
by the secret watch (harness.secrets): a secret the emulator issued or seeded that shows anywhere
but in the result of a task returning it by design, or a traceback, fails the run.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import subprocess
import sys

from .emulator import EMULATOR_PYTHON, ROOT, TESTS, Emulator, HarnessError


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="python -m harness", description=__doc__.split("\n\n", maxsplit=1)[0])
    commands = parser.add_subparsers(dest="what", required=True).add_parser(
        "emulator", help="the platform emulator").add_subparsers(dest="action", required=True)
    run = commands.add_parser("run", help="run it in the foreground")
    run_with = commands.add_parser("exec", help="start it, run a command, stop it")
    for command in (run, run_with):
        command.add_argument("--python", default=EMULATOR_PYTHON, help="the emulator's Python (.venv/emulator)")
        command.add_argument("--host", default="127.0.0.1")
        command.add_argument("--port", type=int, default=0, help="0: a free port")
        command.add_argument("--tls", action="store_true", help="HTTPS with a fresh CA (needs --cert-dir with run)")
        command.add_argument("--cert-dir", help="where --tls writes ca.pem")
        command.add_argument("--lean", action="store_true", help="the lean shapes of real answers")
        command.add_argument("--ready-delay", type=float, help="seconds until a new branch is ready")
        command.add_argument("--args", default="", help="more emulator arguments, one string (e.g. '--rate-limit 50')")
    run_with.add_argument("--log", help="the emulator's log file (default: a temporary file)")
    run_with.add_argument("--timeout", type=float, default=120, help="seconds to wait for the emulator")
    run_with.add_argument("--integration-config", metavar="PATH", help="write the integration targets' configuration")
    run_with.add_argument("--in-process", choices=("true", "false"), help="its planetscale_in_process")
    run_with.add_argument("-C", "--directory", help="run COMMAND in this directory")
    run_with.add_argument("--watch-secrets", action="store_true",
                          help="search COMMAND's output for secrets and tracebacks (harness.secrets); either fails it")
    run_with.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    args = parser.parse_args(argv)
    if args.action == "exec":
        if args.command[:1] == ["--"]:
            args.command = args.command[1:]
        if not args.command:
            parser.error("exec needs a command after --")
    if args.action == "run" and args.tls and not args.cert_dir:
        parser.error("--tls needs --cert-dir")
    return args


def emulator_of(args, log_path=None):
    return Emulator(log_path=log_path, python=args.python, host=args.host, port=args.port, tls=args.tls,
                    cert_dir=args.cert_dir, lean=args.lean, ready_delay=args.ready_delay, args=shlex.split(args.args))


def without_tests_path(environ):
    """The environment without tests/ on PYTHONPATH (put there to run the harness, not the command)."""
    env = dict(environ)
    kept = [entry for entry in env.pop("PYTHONPATH", "").split(os.pathsep)
            if entry and os.path.abspath(entry) != TESTS]
    if kept:
        env["PYTHONPATH"] = os.pathsep.join(kept)
    return env


def _stop_on_sigterm(_signum, _frame):
    raise SystemExit(143)


def foreground(emulator):
    """The emulator in the foreground (its output on this terminal) with its data plane; stopped with it."""
    from .dataplane import DataPlane, DataPlaneError, write_certificates  # pylint: disable=import-outside-toplevel

    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        write_certificates(emulator.cert_dir, emulator.python)
        emulator.dataplane = DataPlane(emulator.cert_dir).start()
        describe_dataplane(emulator)
        return subprocess.call(emulator.command(), env=emulator.environment())
    except DataPlaneError as error:
        raise HarnessError(str(error)) from None
    except KeyboardInterrupt:
        return 130
    finally:
        emulator.stop()


def describe_dataplane(emulator):
    print(emulator.dataplane.describe(), flush=True)


def execute(args):
    """Start the emulator, run the command, stop the emulator; the command's exit code."""
    from .collection import write_integration_config  # pylint: disable=import-outside-toplevel

    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    emulator = emulator_of(args, args.log and os.path.abspath(args.log))
    try:
        emulator.start(timeout=args.timeout)
        print("emulator: %s (log: %s)" % (emulator.url, os.path.relpath(emulator.log_path, ROOT)), flush=True)
        describe_dataplane(emulator)
        if args.integration_config:
            write_integration_config(emulator, args.integration_config, args.in_process == "true")
        env = dict(without_tests_path(os.environ), EMULATOR_URL=emulator.url)
        if args.watch_secrets:
            return watched(args.command, args.directory, env, emulator)
        return subprocess.call(args.command, cwd=args.directory, env=env)
    except KeyboardInterrupt:
        return 130
    finally:
        emulator.stop()


def watched(command, directory, env, emulator):
    """Run the command, its output passed on as it comes and searched by the secret watch at its end."""
    from .ansible import Run  # pylint: disable=import-outside-toplevel
    from .secrets import SecretWatch  # pylint: disable=import-outside-toplevel

    lines = []
    with subprocess.Popen(command, cwd=directory, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace") as process:
        for line in process.stdout:
            sys.stdout.write(line)
            lines.append(line)
    watch = SecretWatch()
    watch.learn(*emulator.secrets())
    label = "the output of %s" % os.path.basename(command[0])  # not its arguments, which may hold a secret
    watch.check(Run(label, command, "".join(lines), process.returncode, 0, 0))
    print("secret watch: %d runs' output searched, %d secrets shown by design, %d leaks, %d tracebacks"
          % (len(watch.runs), watch.shown_by_design, len(watch.leaks), len(watch.tracebacks)), flush=True)
    for leak in watch.leaks[:20]:
        print("secret watch: LEAK %s" % leak, flush=True)
    for where, found in watch.tracebacks[:5]:
        print("secret watch: TRACEBACK in %s:\n%s" % (where, found), flush=True)
    if process.returncode == 0 and (watch.leaks or watch.tracebacks):
        return 1
    return process.returncode


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        if args.action == "run":
            emulator = emulator_of(args)
            if not os.path.exists(emulator.python):
                raise HarnessError("No emulator Python at %s: run `make setup-emulator`." % emulator.python)
            os.chdir(ROOT)
            return foreground(emulator)
        return execute(args)
    except HarnessError as error:
        print("error: %s" % error, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
