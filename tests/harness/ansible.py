# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ansible-playbook runs: an isolated Ansible configuration where planetscale.cloud is this working
tree, and per run its output, exit code, times, recap and JSON results.

The only place that runs ansible-playbook for the tests, the demo and the benchmark.
ansible-playbook is taken from beside the Python that runs the harness (a virtualenv with
ansible-core). The results come from the callback plugin callback_plugins/harness_results.py.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import time

from .collection import credentials_env, emulator_vars
from .emulator import ROOT, HarnessError
from .output import TaskResult, printed

CALLBACKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "callback_plugins")
# ansible.mysql, community.mysql, community.postgresql: the modules users run their DDL with (make db-collections),
# a collections path of their own
DB_COLLECTIONS_PATH = os.path.join(ROOT, "build", "collections")
DB_COLLECTIONS = os.path.join(DB_COLLECTIONS_PATH, "ansible_collections")
TRACEBACK = re.compile(r"Traceback \(most recent call last\)|The full traceback is|MODULE FAILURE|module_stderr|"
                       r"\"exception\":")


class Run:
    """One ansible-playbook run: its output, exit code, wall and CPU seconds, and what the results
    callback wrote (the results, each task's seconds per host, the retries, the recap)."""

    def __init__(self, label, command, output, rc, elapsed, cpu, log_path=None, report=None):
        report = report or {}
        self.label, self.command, self.log_path = label, command, log_path
        self.output, self.rc = output, rc
        self.elapsed, self.cpu = elapsed, cpu  # seconds: wall, and CPU of ansible-playbook and its workers
        self.tasks = [TaskResult(entry["task"], entry["host"], entry["status"], entry.get("result", {}),
                                 entry.get("item"), entry["ignored"]) for entry in report.get("results", ())]
        self.seconds = report.get("seconds", {})  # task name -> host -> seconds it took
        self.retries = report.get("retries", 0)  # retries of until
        self.recap = report.get("recap", {})  # host -> ok, changed, unreachable, failed, skipped, rescued, ignored
        self._printed = None

    @property
    def where(self):
        return self.log_path or self.label

    @property
    def changed(self):
        """The changes of the recap (all hosts)."""
        return sum(counts["changed"] for counts in self.recap.values()) if self.recap else None

    @property
    def task_runs(self):
        """Tasks and loop items that ran (skipped ones do not count), and retries of until."""
        return len([task for task in self.tasks if task.status != "skipped"]) + self.retries

    def result(self, name, host="localhost"):
        found = [task for task in self.tasks if task.name == name and task.host == host]
        if len(found) != 1:
            raise AssertionError("%d results of task %r on %s in %s" % (len(found), name, host, self.where))
        return found[0]

    def results(self, name):
        return [task for task in self.tasks if task.name == name]

    def failures(self):
        return [task for task in self.tasks if task.failed]

    def printed(self):
        """The results the output printed (harness.output), for questions about the output itself."""
        if self._printed is None:
            self._printed = printed(self.output, self.where)
        return self._printed

    def tracebacks(self):
        return TRACEBACK.findall(self.output)

    def succeeded(self, changed=None):
        """Assert the run succeeded (with this many changes); return it."""
        if self.rc != 0 or (changed is not None and self.changed != changed):
            raise AssertionError("expected success with changed=%s, got:\n%s" % (changed, self))
        return self

    def without_failures(self):
        """Assert the run succeeded and no task failed, not even one whose failure was ignored or rescued."""
        failed = self.failures()
        assert self.rc == 0 and not failed, "%s: %s\n%s" % (self.label, failed[:3], self)
        return self

    def failed(self, *messages):
        """Assert the run failed and its output holds each message; return it."""
        missing = [m for m in messages if m not in self.output]
        if self.rc == 0 or missing:
            raise AssertionError("expected a failure saying %r, got:\n%s" % (missing, self))
        return self

    def __str__(self):
        return "%s: rc=%s %s (log %s)\n%s" % (" ".join(self.command), self.rc, self.recap, self.log_path,
                                              self.output[-8000:])


def link_db_collections(target):
    """The database collections (make db-collections), when unpacked, beside planetscale.cloud in ``target``."""
    if not os.path.isdir(DB_COLLECTIONS):
        return
    for namespace in os.listdir(DB_COLLECTIONS):
        for name in os.listdir(os.path.join(DB_COLLECTIONS, namespace)):
            link = os.path.join(target, namespace, name)
            if not os.path.lexists(link):
                os.makedirs(os.path.dirname(link), exist_ok=True)
                os.symlink(os.path.join(DB_COLLECTIONS, namespace, name), link)


class Ansible:
    """Runs ansible-playbook in an isolated Ansible configuration under workdir.

    emulator and credentials say how runs get the emulator's credentials: "variables" passes the
    variables harness.collection.module_defaults() templates (world, api_url, auth_url),
    "environment" sets the PLANETSCALE_* variables a user would; a run may name another emulator.
    With logs, every run's output is kept there (a file per run); with watch (a SecretWatch),
    every run's output is searched for secrets. env: environment variables of every run. results=False
    records no result bodies (the benchmark: statuses and counts only).
    """

    def __init__(self, workdir, python=None, emulator=None, credentials=None, logs=None, log_prefix="",
                 watch=None, verbosity=0, hosts=None, cwd=None, env=None, results=True):
        self.workdir = os.path.abspath(str(workdir))
        self.python = python or sys.executable
        self.bin = os.path.dirname(self.python)
        self.ansible_playbook = os.path.join(self.bin, "ansible-playbook")
        if not os.path.exists(self.ansible_playbook):
            raise HarnessError("No ansible-playbook beside %s: run with the Python of a virtualenv that has "
                               "ansible-core (.venv/new)." % self.python)
        self.emulator = emulator
        self.credentials = credentials
        self.logs = logs
        self.log_prefix = log_prefix
        self.watch = watch
        self.verbosity = verbosity
        self.hosts = hosts
        self.cwd = str(cwd) if cwd else self.workdir
        self.extra_env = dict(env or {})
        self.results = results
        self.collections_path = os.path.join(self.workdir, "collections")
        namespace = os.path.join(self.collections_path, "ansible_collections", "planetscale")
        os.makedirs(namespace, exist_ok=True)
        if not os.path.lexists(os.path.join(namespace, "cloud")):
            os.symlink(ROOT, os.path.join(namespace, "cloud"))
        link_db_collections(os.path.join(self.collections_path, "ansible_collections"))
        self.config = os.path.join(self.workdir, "ansible.cfg")
        with open(self.config, "w", encoding="utf-8") as handle:
            handle.write("[defaults]\ncollections_path = %s\ncollections_scan_sys_path = false\n"
                         "retry_files_enabled = false\nnocolor = true\nlocal_tmp = %s\nremote_tmp = %s\n"
                         "interpreter_python = %s\nlocalhost_warning = false\ncallback_plugins = %s\n"
                         "callbacks_enabled = harness_results\n[inventory]\ninventory_unparsed_warning = false\n" % (
                             self.collections_path, os.path.join(self.workdir, "local-tmp"),
                             os.path.join(self.workdir, "remote-tmp"), self.python, CALLBACKS))
        if logs:
            os.makedirs(logs, exist_ok=True)
        self.runs = []
        self.count = 0

    def env(self, extra=None, collections_path=None, oauth_only=False, emulator=None):
        """The environment of Ansible's commands: none of the caller's ANSIBLE_*, PLANETSCALE_* or PYTHONPATH."""
        env = dict((k, v) for k, v in os.environ.items()
                   if not k.startswith(("ANSIBLE_", "PLANETSCALE_")) and k != "PYTHONPATH")
        env.update(ANSIBLE_CONFIG=self.config, ANSIBLE_HOME=os.path.join(self.workdir, "home"), PYTHONHASHSEED="0",
                   PATH=os.pathsep.join((self.bin, env.get("PATH", ""))))
        if collections_path:
            env["ANSIBLE_COLLECTIONS_PATH"] = str(collections_path)
        emulator = emulator or self.emulator
        if emulator is not None and self.credentials == "environment":
            env.update(credentials_env(emulator, oauth_only=oauth_only))
        env.update(self.extra_env)
        env.update(extra or {})
        return env

    def run(self, playbook, extra_vars=None, *, label=None, emulator=None, hosts=None, forks=None, in_process=None,
            check=False, diff=False, verbosity=None, args=(), env=None, collections_path=None, oauth_only=False,
            cwd=None, timeout=900, prefix=(), echo=False):
        """Run a playbook once; answer the Run. Never raises on a failed playbook.

        playbook: a list of plays (Python data), a playbook's YAML text, a path, or a name such as
        planetscale.cloud.demo. hosts: an inventory of these hosts (local connection; by default the
        runner's hosts); none gives Ansible's implicit localhost. in_process: the planetscale_in_process
        variable (unset: the default, in-process). echo: show the output as it comes, as well as keep it.
        """
        emulator = emulator or self.emulator
        if emulator is not None and self.credentials == "variables":
            extra_vars = dict(emulator_vars(emulator), **(extra_vars or {}))
        if in_process is not None:
            extra_vars = dict(extra_vars or {}, planetscale_in_process=in_process)
        label = label or (playbook if isinstance(playbook, str) and "\n" not in playbook else "playbook")
        self.count += 1
        slug = re.sub(r"[^a-z0-9]+", "-", os.path.basename(label).lower()).strip("-")[:80]
        base = os.path.join(self.workdir, "%03d-%s" % (self.count, slug))
        command = list(prefix) + [self.ansible_playbook, self._playbook(playbook, base)]
        if extra_vars:
            with os.fdopen(os.open(base + ".vars.json", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w",
                           encoding="utf-8") as handle:
                json.dump(extra_vars, handle)
            command += ["-e", "@" + base + ".vars.json"]
        hosts = self.hosts if hosts is None else hosts
        if hosts:
            with open(base + ".ini", "w", encoding="utf-8") as handle:
                handle.write("".join("%s ansible_connection=local\n" % host for host in hosts))
            command += ["-i", base + ".ini"]
        if forks:
            command += ["--forks", str(forks)]
        verbosity = self.verbosity if verbosity is None else verbosity
        command += (["-" + "v" * verbosity] if verbosity else []) + (["--check"] if check else [])
        command += (["--diff"] if diff else []) + list(args)
        report_path = base + ".results.json"
        extra_env = dict(HARNESS_RESULTS=report_path, HARNESS_RESULT_BODIES="1" if self.results else "0")
        extra_env.update(env or {})
        output, rc, elapsed, cpu = self._execute(command, cwd or self.cwd, self.env(
            extra_env, collections_path, oauth_only, emulator), timeout, label, echo)
        report = None
        if os.path.exists(report_path):
            with open(report_path, encoding="utf-8") as handle:
                report = json.load(handle)
        run = Run(label, command, output, rc, elapsed, cpu, self._log(base, command, output, rc, elapsed), report)
        self.runs.append(run)
        if self.watch is not None:
            self.watch.check(run)
        return run

    @staticmethod
    def _playbook(playbook, base):
        """The playbook's path or name for the command line (data and YAML text are written to a file)."""
        if isinstance(playbook, str) and "\n" not in playbook:
            return playbook
        with open(base + ".yml", "w", encoding="utf-8") as handle:
            if isinstance(playbook, str):
                handle.write(playbook)
            else:
                # the emulator's Python, which imports the harness too, need not have yaml
                import yaml  # pylint: disable=import-outside-toplevel

                yaml.safe_dump(playbook, handle, sort_keys=False, width=1000)
        return base + ".yml"

    @staticmethod
    def _execute(command, cwd, env, timeout, label, echo):
        """(output, exit code, wall seconds, CPU seconds of the command and its children)."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        with subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, text=True) as process:
            try:
                if echo:
                    lines = []
                    for line in process.stdout:
                        sys.stdout.write(line)
                        sys.stdout.flush()
                        lines.append(line)
                    output = "".join(lines)
                    process.wait(timeout=timeout)
                else:
                    output = process.communicate(timeout=timeout)[0]
            except subprocess.TimeoutExpired:
                process.kill()
                output = process.communicate()[0]
                raise HarnessError("%s did not end within %s seconds (a hang):\n%s" % (
                    label, timeout, (output or "")[-3000:])) from None
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return output, process.returncode, elapsed, cpu

    def _log(self, base, command, output, rc, elapsed):
        """Keep the run's output in logs (when given); answer its path."""
        if not self.logs:
            return None
        path = os.path.join(self.logs, "%s%s.log" % (self.log_prefix, os.path.basename(base)))
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("$ %s\n\n%s\n# exit %s after %.1f seconds\n" % (" ".join(command), output, rc, elapsed))
        return path

    def assert_no_secret(self, *values):
        """No run showed a secret: the emulator's, the ones given, any issued one (needs a watch)."""
        self.watch.learn(*values)
        self.watch.assert_no_leak()
