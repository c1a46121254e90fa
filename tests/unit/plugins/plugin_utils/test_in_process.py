# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The in-process adapter runs a module's logic as a module process would."""

from __future__ import annotations

import os
from types import SimpleNamespace

from ansible.module_utils.basic import env_fallback

from ansible_collections.planetscale.cloud.plugins.module_utils.base import Module
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
