# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the suites that walk every module still list by hand names every module, so that a new module fails
here, in seconds, and not at the end of a reliability run (CONTRIBUTING.md, "A new resource module").

The rest of those suites' tables come from the modules' classes (tests/harness/collection.py,
tests/reliability/test_bad_input.py); the harness reads each class's option sets from its source,
and this file holds that reading to the classes themselves.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import os

from ansible_collections.planetscale.cloud.plugins.module_utils.base import Module
from ansible_collections.planetscale.cloud.tests.unit.each import each

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULES = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "plugins", "modules"))
                 if f.endswith(".py") and not f.startswith("_"))
BAD_INPUT = os.path.join(ROOT, "tests", "reliability", "test_bad_input.py")
SCENARIOS = os.path.join(ROOT, "tests", "reliability", "scenarios.py")


def _tree(path):
    with open(path, encoding="utf-8") as handle:
        return ast.parse(handle.read(), path)


def _assigned(path, name):
    """The value assigned to a module-level name of a file, as a syntax tree (the file is not imported: the
    reliability suite's imports need its virtualenv)."""
    return next(node.value for node in _tree(path).body if isinstance(node, ast.Assign)
                and [getattr(target, "id", None) for target in node.targets] == [name])


def _module_class(name):
    """The Module subclass a module file defines."""
    module = importlib.import_module("ansible_collections.planetscale.cloud.plugins.modules." + name)
    return next(value for value in vars(module).values() if isinstance(value, type) and issubclass(value, Module)
                and value.__module__ == module.__name__)


@functools.lru_cache(maxsize=None)
def _harness_collection():
    """tests/harness/collection.py alone (the harness package imports more than the unit tests need), read once."""
    spec = importlib.util.spec_from_file_location("harness_collection",
                                                  os.path.join(ROOT, "tests", "harness", "collection.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bad_input_suite_has_valid_arguments_for_every_module():
    """VALID: each module's valid arguments, which every generated case of tests/reliability/test_bad_input.py
    starts from (a module without them fails the whole suite)."""
    valid = _assigned(BAD_INPUT, "VALID")
    listed = sorted(key.value for key in valid.keys)
    assert listed == MODULES, "VALID in tests/reliability/test_bad_input.py: add %s; remove %s" % (
        sorted(set(MODULES) - set(listed)) or "none", sorted(set(listed) - set(MODULES)) or "none")


def test_the_every_module_playbook_uses_every_module():
    """every_module() in tests/reliability/scenarios.py: the transient-fault test runs it and asserts that it
    uses every module."""
    function = next(node for node in _tree(SCENARIOS).body if isinstance(node, ast.FunctionDef)
                    and node.name == "every_module")
    used = set(call.args[1].value for call in ast.walk(function) if isinstance(call, ast.Call)
               and getattr(call.func, "id", None) == "task" and len(call.args) > 1
               and isinstance(call.args[1], ast.Constant))
    assert sorted(used) == MODULES, "every_module() in tests/reliability/scenarios.py: give a task to %s" % (
        sorted(set(MODULES) - used))


def _endpoint(api_path):
    return "/v1/organizations/{}/" + "/".join("{}" if segment.startswith("{") else segment for segment in api_path)


@each([name for name in MODULES if getattr(_module_class(name), "api_path", None)])
def test_the_bad_input_suite_knows_the_endpoints_of_every_resource_module(name):
    """ENDPOINTS in tests/reliability/test_bad_input.py: a request to an endpoint not listed there is a stray."""
    endpoints = set(node.value for node in ast.walk(_assigned(BAD_INPUT, "ENDPOINTS"))
                    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("/"))
    collection = _endpoint(_module_class(name).api_path)
    missing = sorted({collection, collection + "/{}"} - endpoints)
    assert not missing, "ENDPOINTS in tests/reliability/test_bad_input.py: add %s" % missing


@functools.lru_cache(maxsize=None)
def _module_defaults():
    return _harness_collection().module_defaults()


@each(MODULES)
def test_the_harness_reads_the_option_sets_each_class_states(name):
    """NO_ORGANIZATION and module_defaults() come from the option sets the harness reads in each module's source."""
    read = _harness_collection().option_sets(name)
    assert read == tuple(option_set.name.upper() for option_set in _module_class(name).option_sets)


@each(MODULES)
def test_the_harness_gives_a_module_the_required_options_of_its_sets_and_only_options_it_takes(name):
    module_class = _module_class(name)
    given = _module_defaults()["planetscale.cloud." + name]
    assert set(given) <= set(module_class.taken_options())
    required = [option for option_set in module_class.option_sets for option, spec in option_set.options.items()
                if spec.get("required")]
    assert set(required) <= set(given)
