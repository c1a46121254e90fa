# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Collection-wide invariants: the action group and the action plugin (the options: test_option_sets.py)."""

from __future__ import annotations

import importlib
import os
import re
from unittest import mock

import yaml

from ansible_collections.planetscale.cloud.plugins.plugin_utils.in_process import InProcessAction, module_class_of
from ansible_collections.planetscale.cloud.tests.unit.each import each

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULES = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "plugins", "modules"))
                 if f.endswith(".py") and not f.startswith("_"))
ACTIONS = os.path.join(ROOT, "plugins", "action")
ACTION = "user_info.py"  # every module's action file is this file, byte for byte (CONTRIBUTING.md, "The action plugin")


def _read(path):
    with open(path, "rb") as handle:
        return handle.read()


def _runtime():
    with open(os.path.join(ROOT, "meta", "runtime.yml")) as handle:
        return yaml.safe_load(handle)


def test_action_group_all_lists_exactly_the_modules():
    assert sorted(_runtime()["action_groups"]["all"]) == MODULES


def test_every_module_s_action_file_is_the_one_action_file_byte_for_byte():
    """A module without its action file would run as a module process only, never in-process; an action file that
    differs would be a second action to keep in step. A regular file, not a symbolic link: antsibull-docs (since
    2.16) documents a module whose action file links to another's as a redirect to that module."""
    paths = dict((name, os.path.join(ACTIONS, name + ".py")) for name in MODULES)
    one = _read(os.path.join(ACTIONS, ACTION))
    found = dict((name, "link" if os.path.islink(path) else "same" if os.path.isfile(path) and _read(path) == one
                  else "different") for name, path in paths.items())
    assert found == dict((name, "same") for name in MODULES)


def test_no_other_action_plugin_and_no_routing():
    """Each module's action is found by the module's name, as ansible-core looks it up: nothing routes a module
    elsewhere (meta/runtime.yml), so module_defaults for one module stay that module's."""
    assert sorted(f[:-3] for f in os.listdir(ACTIONS) if f.endswith(".py")) == MODULES
    assert "plugin_routing" not in _runtime()


@each(MODULES)
def test_each_module_s_action_is_the_one_action_under_the_module_s_name(name):
    """ansible-playbook's own process looks up the task's action plugin by the module's name when it plans a task
    (the linear and free strategies, class_only): loading it there imports the module's code once per run, and
    every worker it forks has it, instead of each task importing requests and the module utilities again."""
    module = importlib.import_module("ansible_collections.planetscale.cloud.plugins.action." + name)
    assert issubclass(module.ActionModule, InProcessAction) and module.ActionModule.module_class is None


@each(MODULES)
def test_the_action_plugin_runs_the_class_the_module_runs(name):
    """module_class_of finds, in the module's file, the class its main() gives run_module."""
    module = importlib.import_module("ansible_collections.planetscale.cloud.plugins.modules." + name)
    with mock.patch.object(module, "run_module") as run_module:
        module.main()
    assert module_class_of(name) is run_module.call_args.args[0]


def test_the_user_agent_names_the_version_in_galaxy_yml():
    """galaxy.yml is the one source of the version; the client's User-Agent must say the same."""
    from ansible_collections.planetscale.cloud.plugins.module_utils import client

    with open(os.path.join(ROOT, "galaxy.yml")) as handle:
        version = yaml.safe_load(handle)["version"]
    assert client.COLLECTION_VERSION == version
    assert client.USER_AGENT.startswith("planetscale.cloud/%s " % version)


def test_each_plugin_is_added_in_the_release_that_first_shipped_it_or_in_the_one_galaxy_yml_describes():
    """version_added is the release whose entry in changelogs/changelog.yaml first lists the plugin, or, for a plugin
    no release lists yet, the version galaxy.yml is about to release (not an earlier one: that would tell a reader
    the plugin is in a release they already have)."""
    with open(os.path.join(ROOT, "galaxy.yml")) as handle:
        upcoming = str(yaml.safe_load(handle)["version"])
    with open(os.path.join(ROOT, "changelogs", "changelog.yaml")) as handle:
        releases = yaml.safe_load(handle)["releases"]
    from ansible.module_utils.compat.version import LooseVersion

    shipped = {}
    for version in sorted(releases, key=LooseVersion):
        release = releases[version]
        for kind, entries in [("modules", release.get("modules") or [])] + sorted((release.get("plugins") or {}).items()):
            for entry in entries:
                shipped.setdefault((kind, entry["name"]), version)
    for kind in ("modules", "filter"):
        folder = os.path.join(ROOT, "plugins", kind)
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".py") or name.startswith("_"):
                continue
            module = importlib.import_module("ansible_collections.planetscale.cloud.plugins.%s.%s" % (kind, name[:-3]))
            documented = yaml.safe_load(module.DOCUMENTATION)
            for plugin in [documented["name"]] if kind == "filter" else [name[:-3]]:
                added = str(documented["version_added"])
                expected = shipped.get((kind, plugin), upcoming)
                assert added == expected, "%s/%s: version_added %s, but it is %s" % (
                    kind, plugin, added, "new in %s" % upcoming if expected == upcoming else "in %s" % expected)


def _seealso(name):
    module = importlib.import_module("ansible_collections.planetscale.cloud.plugins.modules." + name)
    return set(entry.get("module") for entry in yaml.safe_load(module.DOCUMENTATION).get("seealso") or ())


def _resource_of(info):
    """The resource module an info module reads: branch_info -> branch, team_member_info -> team."""
    stem = info[:-len("_info")]
    return max((name for name in MODULES if not name.endswith("_info") and (stem == name or stem.startswith(name + "_"))),
               key=len, default=None)


@each([name for name in MODULES if name.endswith("_info") and _resource_of(name)])
def test_each_info_module_and_its_resource_module_point_at_each_other(info):
    resource = _resource_of(info)
    assert "planetscale.cloud." + resource in _seealso(info)
    if resource + "_info" in MODULES:  # the resource points at its own info module
        assert "planetscale.cloud.%s_info" % resource in _seealso(resource)


def _roadmap():
    """The README's section "Release notes and roadmap": (its entry per release, what it says comes next)."""
    with open(os.path.join(ROOT, "README.md")) as handle:
        section = handle.read().split("## Release notes and roadmap", 1)[1].split("\n## ", 1)[0]
    entries = dict(re.findall(r"^- (\d+\.\d+\.\d+)\b(.*?)(?=^- |^\n)", section, re.MULTILINE | re.DOTALL))
    upcoming = section.split("Next on the roadmap", 1)[1]
    return entries, " ".join(upcoming.lower().replace("-", " ").split())


def test_the_readme_roadmap_has_each_release_and_names_nothing_shipped_as_next():
    added = {}
    for name in MODULES:
        module = importlib.import_module("ansible_collections.planetscale.cloud.plugins.modules." + name)
        added.setdefault(str(yaml.safe_load(module.DOCUMENTATION)["version_added"]), []).append(name)
    entries, upcoming = _roadmap()
    for version, names in added.items():
        assert version in entries, "the README's roadmap has no entry for %s, which adds %s" % (version, names)
        count = re.search(r"\((\d+) new modules\)", entries[version])
        assert count is None or int(count.group(1)) == len(names), (version, sorted(names))
    for name in MODULES:
        subject = re.sub(r"^postgres_|_info$", "", name).replace("_", " ")
        assert subject not in upcoming, "the roadmap names %r as next, which %s ships" % (subject, name)
