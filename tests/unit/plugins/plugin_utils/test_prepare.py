# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""prepare(): what ansible-playbook's own process does once a run, when it loads a module's action file to plan a
task, so that the workers it forks for the tasks inherit it instead of each doing it again.

Each case runs in a new interpreter: what is imported and loaded is the process's state, and a test run's own
process has loaded whatever earlier tests needed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.planetscale.cloud.plugins.plugin_utils import in_process, persist

PROBE = r'''
import argparse, json, multiprocessing, os, sys
from ansible import context
if sys.argv[1] == "command":
    context._init_global_context(argparse.Namespace(verbosity=0))  # as ansible-playbook sets its arguments
import ansible_collections.planetscale.cloud.plugins.action.team_info  # as the strategy loads it (class_only)
from ansible_collections.planetscale.cloud.plugins.plugin_utils import persist

MODULES = "ansible_collections.planetscale.cloud.plugins.modules."


def loaded(kind):  # the plugin loader names ansible-core's core.py with digits: core_1934..., 5731..._core (2.17)
    return any(name.startswith("ansible.plugins.%s." % kind) and name.rpartition(".")[2].strip("0123456789_") == "core"
               for name in sys.modules)


def seen(module):
    return dict(module=MODULES + module in sys.modules, filters=loaded("filter"), tests=loaded("test"), run_start=os.getppid() in persist.RUN_STARTS
                if multiprocessing.parent_process() else os.getpid() in persist.RUN_STARTS)


def worker(queue):
    inherited = seen("team_info")
    import ansible_collections.planetscale.cloud.plugins.action.branch_info  # a worker loads one itself
    queue.put(dict(inherited=inherited, own=seen("branch_info")))


context_ = multiprocessing.get_context("fork")
queue = context_.Queue()
process = context_.Process(target=worker, args=(queue,))
process.start()
answer = dict(parent=seen("team_info"), worker=queue.get(), real=MODULES + "user_info" in sys.modules)
process.join()
print(json.dumps(answer))
'''


def probe(kind):
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(path for path in sys.path if path))
    done = subprocess.run([sys.executable, "-c", PROBE, kind], capture_output=True, text=True, env=environment,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def command():
    return probe("command")


def test_in_an_ansible_command_s_own_process_the_module_s_code_is_imported_with_its_action_file(command):
    """The action file of team_info, the same file as user_info.py, loaded under team_info's name: team_info's code."""
    assert command["parent"]["module"] is True
    assert command["real"] is False  # not the module whose name the one real action file has
    assert command["worker"]["inherited"]["module"] is True  # so a task's worker never imports it


def test_ansible_core_s_filter_and_test_plugins_are_loaded_there_once(command):
    assert command["parent"]["filters"] is True and command["parent"]["tests"] is True
    assert command["worker"]["inherited"]["filters"] is True and command["worker"]["inherited"]["tests"] is True


def test_the_run_s_start_time_is_remembered_there_for_its_workers(command):
    assert command["parent"]["run_start"] is True
    assert command["worker"]["inherited"]["run_start"] is True


def test_a_worker_forked_for_a_task_prepares_nothing_itself(command):
    """An action file the worker loads itself (one the strategy did not load first) does not prepare: a worker runs
    one task."""
    assert command["worker"]["own"]["module"] is False


def test_outside_an_ansible_command_nothing_is_prepared():
    """ansible-test's import check, ansible-doc, a unit test: importing an action file loads nothing more."""
    found = probe("import")
    assert found["parent"] == dict(module=False, filters=False, tests=False, run_start=False)


def test_a_worker_s_link_takes_the_remembered_start_instead_of_reading_proc(monkeypatch, tmp_path):
    monkeypatch.setitem(persist.RUN_STARTS, 4242, "123456")
    monkeypatch.setattr(persist.keeper_module, "process_start", lambda pid: pytest.fail("read /proc for %d" % pid))
    link = persist.Link(str(tmp_path), 4242)
    assert link.run_start == "123456" and link.name == "run-4242-123456.sock"


def test_a_link_of_a_run_not_remembered_reads_its_start(monkeypatch, tmp_path):
    monkeypatch.setattr(persist.keeper_module, "process_start", lambda pid: "777")
    assert persist.Link(str(tmp_path), 4343).run_start == "777"


def test_the_primer_has_a_filter_and_a_test():
    """Jinja loads a filter plugin for `|` and a test plugin for `is`: one expression loads both kinds."""
    assert "|" in in_process.PRIMER and " is " in in_process.PRIMER
