# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Collection-wide invariants: the action group, the action plugins, the shared option docs."""

from __future__ import annotations

import importlib
import os

import pytest
import yaml

from ansible_collections.planetscale.cloud.plugins.doc_fragments.api import ModuleDocFragment as ApiDocs
from ansible_collections.planetscale.cloud.plugins.module_utils import base
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


@pytest.mark.parametrize("fragment, options", [
    (ApiDocs.DOCUMENTATION, base.CREDENTIAL_OPTIONS),
    (ApiDocs.CONNECTION, base.CONNECTION_OPTIONS),
    (ApiDocs.ORGANIZATION, base.ORGANIZATION_OPTION),
    (ApiDocs.OAUTH, base.OAUTH_OPTIONS),
])
def test_doc_fragments_match_the_shared_argument_spec(fragment, options):
    documented = yaml.safe_load(fragment)["options"]
    assert sorted(documented) == sorted(options)
    for name, spec in options.items():
        doc = documented[name]
        assert doc["type"] == spec["type"], name
        assert doc.get("default") == spec.get("default"), name
        assert bool(doc.get("required")) == bool(spec.get("required")), name
        env = spec.get("fallback", (None, []))[1]
        for variable in env:
            assert "E(%s)" % variable in " ".join(doc["description"]), name


@pytest.mark.parametrize("name", MODULES)
def test_every_module_accepts_every_option_of_the_action_group(name):
    """module_defaults for group/planetscale.cloud.all sets the same options on every module: none may refuse them."""
    module_class = importlib.import_module("ansible_collections.planetscale.cloud.plugins.action." + name).ActionModule.module_class
    options = module_class.spec()["argument_spec"]
    assert set(base.GROUP_OPTIONS) <= set(options)
    for option in base.GROUP_OPTIONS:
        assert options[option]["type"] == base.GROUP_OPTIONS[option]["type"]
        assert bool(options[option].get("no_log")) == bool(base.GROUP_OPTIONS[option].get("no_log"))
