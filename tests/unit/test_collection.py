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


def test_the_user_agent_names_the_version_in_galaxy_yml():
    """galaxy.yml is the one source of the version; the client's User-Agent must say the same."""
    from ansible_collections.planetscale.cloud.plugins.module_utils import client

    with open(os.path.join(ROOT, "galaxy.yml")) as handle:
        version = yaml.safe_load(handle)["version"]
    assert client.COLLECTION_VERSION == version
    assert client.USER_AGENT.startswith("planetscale.cloud/%s " % version)


def test_every_new_plugin_is_added_in_the_version_galaxy_yml_is_about_to_release_or_before():
    """version_added never names a release after the one galaxy.yml describes."""
    from ansible.module_utils.compat.version import LooseVersion

    with open(os.path.join(ROOT, "galaxy.yml")) as handle:
        version = LooseVersion(yaml.safe_load(handle)["version"])
    for kind in ("modules", "filter"):
        folder = os.path.join(ROOT, "plugins", kind)
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".py") or name.startswith("_"):
                continue
            module = importlib.import_module("ansible_collections.planetscale.cloud.plugins.%s.%s" % (kind, name[:-3]))
            added = yaml.safe_load(module.DOCUMENTATION)["version_added"]
            assert LooseVersion(str(added)) <= version, "%s/%s: version_added %s" % (kind, name, added)


def _seealso(name):
    module = importlib.import_module("ansible_collections.planetscale.cloud.plugins.modules." + name)
    return set(entry.get("module") for entry in yaml.safe_load(module.DOCUMENTATION).get("seealso") or ())


def _resource_of(info):
    """The resource module an info module reads: branch_info -> branch, team_member_info -> team."""
    stem = info[:-len("_info")]
    return max((name for name in MODULES if not name.endswith("_info") and (stem == name or stem.startswith(name + "_"))),
               key=len, default=None)


@pytest.mark.parametrize("info", [name for name in MODULES if name.endswith("_info") and _resource_of(name)])
def test_each_info_module_and_its_resource_module_point_at_each_other(info):
    resource = _resource_of(info)
    assert "planetscale.cloud." + resource in _seealso(info)
    if resource + "_info" in MODULES:  # the resource points at its own info module
        assert "planetscale.cloud.%s_info" % resource in _seealso(resource)
