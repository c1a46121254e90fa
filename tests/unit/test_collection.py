# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Collection-wide invariants: the action group and the action plugins (the options: test_option_sets.py)."""

from __future__ import annotations

import importlib
import os

import pytest
import yaml

from ansible_collections.planetscale.cloud.plugins.plugin_utils.in_process import InProcessAction

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULES = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "plugins", "modules"))
                 if f.endswith(".py") and not f.startswith("_"))


def test_action_group_all_lists_exactly_the_modules():
    with open(os.path.join(ROOT, "meta", "runtime.yml")) as handle:
        runtime = yaml.safe_load(handle)
    assert sorted(runtime["action_groups"]["all"]) == MODULES


@pytest.mark.parametrize("name", MODULES)
def test_every_module_has_an_in_process_action_of_the_same_name(name):
    action = importlib.import_module("ansible_collections.planetscale.cloud.plugins.action." + name).ActionModule
    module = importlib.import_module("ansible_collections.planetscale.cloud.plugins.modules." + name)
    assert issubclass(action, InProcessAction)
    assert getattr(module, action.module_class.__name__) is action.module_class
