# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The in-process adapter runs a module's logic as a module process would."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest
from ansible.module_utils.basic import env_fallback
from ansible.plugins.action import ActionBase

from ansible_collections.planetscale.cloud.plugins.module_utils.base import Module
from ansible_collections.planetscale.cloud.plugins.plugin_utils import in_process
from ansible_collections.planetscale.cloud.plugins.plugin_utils.in_process import InProcessAction


class Probe(Module):
    """Answers what it saw: its option (with an environment fallback) and the environment while it ran."""

    uses_credentials = False
    uses_organization = False
    argument_spec = dict(value=dict(type="str", fallback=(env_fallback, ["PROBE_VALUE"])))

    def run(self):
        return dict(value=self.params["value"], proxy=os.environ.get("HTTPS_PROXY"))


class ProbeAction(InProcessAction):
    module_class = Probe


def run_action(args, environment):
    action = ProbeAction.__new__(ProbeAction)
    action._task = SimpleNamespace(args=args, check_mode=False, diff=False, action="probe")
    action._task_environment = lambda: environment
    return action._run_in_process()


def test_the_whole_run_sees_the_task_environment_and_the_controller_keeps_its_own(monkeypatch):
    monkeypatch.setenv("PROBE_VALUE", "controller")
    monkeypatch.delenv("HTTPS_PROXY", raising=False)
    result = run_action({}, {"PROBE_VALUE": "task", "HTTPS_PROXY": "http://proxy.example:3128"})
    assert result["value"] == "task"
    assert result["proxy"] == "http://proxy.example:3128"  # what requests reads while the module runs
    assert os.environ["PROBE_VALUE"] == "controller"
    assert "HTTPS_PROXY" not in os.environ


def test_without_a_task_environment_the_fallback_comes_from_the_controller(monkeypatch):
    monkeypatch.setenv("PROBE_VALUE", "controller")
    assert run_action({}, {})["value"] == "controller"


class Warner(Module):
    """Warns, then fails: a failure whose message no_log hides, and a warning that says what to do."""

    uses_credentials = False
    uses_organization = False

    def run(self):
        self.ctx.warn("2 passwords are named 'app': set id.")
        return dict(changed=False)


class WarnerAction(InProcessAction):
    module_class = Warner


@pytest.mark.parametrize("path", ["in_process", "module"])
@pytest.mark.parametrize("no_log, hides, shown", [(True, True, True), (True, False, False), (False, True, False)],
                         ids=["no_log-before-2.19", "no_log-since-2.19", "logged"])
def test_a_no_log_task_shows_its_warnings_where_ansible_core_would_hide_them(monkeypatch, path, no_log, hides, shown):
    """Before ansible-core 2.19 no_log hides a result whole; later ones show its warnings themselves."""
    displayed = []
    monkeypatch.setattr(ActionBase, "run", lambda self, tmp=None, task_vars=None: {})
    monkeypatch.setattr(in_process, "NO_LOG_HIDES_WARNINGS", hides)
    monkeypatch.setattr(in_process.display, "warning", displayed.append)
    action = WarnerAction.__new__(WarnerAction)
    action._task = SimpleNamespace(args={}, check_mode=False, diff=False, action="warner", no_log=no_log, async_val=0)
    action._task_environment = lambda: {}
    action._in_process = lambda task_vars: path == "in_process"
    action._run_module = lambda task_vars: dict(changed=False, warnings=["2 passwords are named 'app': set id."])
    result = action.run(task_vars={})
    assert result["warnings"] == ["2 passwords are named 'app': set id."]
    assert displayed == (result["warnings"] if shown else [])
