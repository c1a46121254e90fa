# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The execution paths: the plays that use every module (scenarios.every_module), without faults, run by
ansible-playbook in-process and through module processes, each against the emulator's seeded world and each
beside the same plays run by the modules' classes in this process (harness.direct, as the in-process action runs
them): every task reports the same on each path as the class does (status, changed, the result with its ids, times
and secrets blanked), so the two paths report the same; the end state is the same. One test runs the classes once
and both paths against that run (two tests ran the classes twice, for nothing).

These runs are also the end-to-end runs of each kind of wait (a branch ready, a database, a backup, a deploy
request, a bouncer), of each write (create, update, delete; passwords, roles and service tokens shown once; both
token grants), and of the secrets returned by design (a password's plain_text, a role's password, a service
token, OAuth tokens), which the secret watch finds only where they may show.
"""

from __future__ import annotations

import re

from harness import MODULES
from scenarios import end_state, every_module, prepare

# The emulator answers this file as the real platform does when it is lean, as the fault tests read it.
LEAN_SHAPES = True
# What differs between two runs of the same plays: ids, times, secrets and what is derived from them.
TIME = re.compile(r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?$")
SECRET = re.compile(r"pscale_[a-z_]+?_[A-Za-z0-9]{8,}")
ID = re.compile(r"\b(?=[a-z0-9]*[0-9])(?=[a-z0-9]*[a-z])[a-z0-9]{10,}\b")
CLOCK_KEYS = frozenset(("exp", "iat", "expires_in", "expires_at", "ttl_remaining", "elapsed", "duration"))


def _blank(value, key=None):
    """The value with what differs between two runs blanked."""
    if isinstance(value, dict):  # (ansible-core names the deprecator of a deprecation its own way)
        return dict((name, _blank(item, name)) for name, item in value.items() if name != "deprecator")
    if isinstance(value, list):
        return [_blank(item) for item in value]
    if key in CLOCK_KEYS and isinstance(value, (int, float)):
        return "<clock>"
    if isinstance(value, str):
        if TIME.match(value):
            return "<time>"
        return ID.sub("<id>", SECRET.sub("<secret>", value))
    return value


def _reported(run):
    return [(task.name, task.status, task.changed, _blank(task.result)) for task in run.tasks]


def _run(emulator, runner, **options):
    emulator.reset()
    playbook, modules = every_module(emulator)
    assert modules == sorted(MODULES)
    run = runner.run([playbook], prepare(emulator, runner.watch), emulator=emulator, **options).without_failures()
    return _reported(run), end_state(emulator)


def test_every_module_reports_on_each_execution_path_what_its_class_reports(session_emulator, direct, ansible):
    here, state = _run(session_emulator, direct, label="every module, in this process")
    for in_process in (True, False):
        there, path_state = _run(session_emulator, ansible, in_process=in_process,
                                 label="every module, in_process=%s" % in_process)
        assert [entry[0] for entry in there] == [entry[0] for entry in here]
        differing = [(mine, theirs) for mine, theirs in zip(here, there) if mine != theirs]
        assert differing == [], "tasks that report otherwise through ansible-playbook (in_process=%s):\n%s" % (
            in_process, "\n".join("%r\n  !=\n%r" % pair for pair in differing[:3]))
        assert path_state == state, "the end state differs after the run with in_process=%s" % in_process
