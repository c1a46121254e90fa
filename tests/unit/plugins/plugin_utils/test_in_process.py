# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The in-process adapter's contract: it runs a module's logic as a module process would, or falls back."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest
from ansible import constants as C
from ansible.module_utils.basic import env_fallback
from ansible.module_utils.common.parameters import remove_values
from ansible.plugins.action import ActionBase

from ansible_collections.planetscale.cloud.plugins.module_utils.base import Module, ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION
from ansible_collections.planetscale.cloud.plugins.plugin_utils import in_process
from ansible_collections.planetscale.cloud.plugins.plugin_utils.in_process import InProcessAction

SECRET = "s3cr3t-Value-41"


class Probe(Module):
    """Answers what it saw: its options (one with an environment fallback) and the environment while it ran."""

    option_sets = (CONNECTION,)
    argument_spec = dict(
        value=dict(type="str", fallback=(env_fallback, ["PROBE_VALUE"])),
        secret=dict(type="str", no_log=True),
        old=dict(type="str", removed_in_version="2.0.0", removed_from_collection="planetscale.cloud"),
        name=dict(type="str", aliases=["label"]),
        fail=dict(type="bool", default=False),
    )

    def run(self):
        if self.params["fail"]:
            raise ModuleFailure("the probe failed with %s" % self.params["secret"], echoed=dict(s=self.params["secret"]))
        return dict(value=self.params["value"], proxy=os.environ.get("HTTPS_PROXY"), echoed=self.params["secret"],
                    nested=dict(items=[self.params["secret"], "plain"]), name=self.params["name"])


class ProbeAction(InProcessAction):
    module_class = Probe


def make_action(args=None, environment=None, check_mode=False, async_val=0, transport="local"):
    action = ProbeAction.__new__(ProbeAction)
    action._task = SimpleNamespace(args=args or {}, check_mode=check_mode, diff=False, action="probe",
                                   async_val=async_val)
    action._connection = SimpleNamespace(transport=transport)
    action._templar = SimpleNamespace(template=lambda value: value)
    action._compute_environment_string = lambda raw_environment_out: raw_environment_out.update(environment or {})
    return action


def run_action(args, environment=None, task_vars=None):
    return make_action(args, environment)._in_process_result(task_vars or {})


# Environment --------------------------------------------------------------------------------------

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


# Masking ------------------------------------------------------------------------------------------

def test_no_log_values_are_masked_everywhere_in_the_result_and_booleans_are_kept():
    result = run_action(dict(secret=SECRET, value="v"))
    assert SECRET not in repr(result)
    assert result["echoed"] == "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"
    assert result["nested"]["items"] == ["VALUE_SPECIFIED_IN_NO_LOG_PARAMETER", "plain"]
    assert result["changed"] is False
    assert result["proxy"] is None


def test_a_failure_is_masked_too():
    result = run_action(dict(secret=SECRET, fail=True))
    assert result["failed"] is True
    assert SECRET not in repr(result)
    assert result["msg"] == "the probe failed with ********"


def masked_by_remove_values(result, no_log_values):
    """What _mask answered before its shortcut: remove_values over the whole result, booleans and None kept."""
    preserved = dict((key, value) for key, value in result.items() if value is None or isinstance(value, bool))
    return dict(remove_values(result, no_log_values), **preserved)


def test_a_result_that_holds_no_no_log_value_is_answered_as_it_is_without_a_walk(monkeypatch):
    """Issue 49: remove_values copies every value (0.7 s for 5,000 members); a result whose JSON text holds none of
    the values is not walked."""
    monkeypatch.setattr(in_process, "remove_values", lambda *args: pytest.fail("remove_values walked the result"))
    result = dict(changed=False, members=[dict(id="m-%d" % n, name="Person %d" % n, admin=n % 2 == 0, seen=None,
                                               score=n * 1.5) for n in range(50)])
    assert in_process._mask(result, {SECRET, "svc-id-7"}) is result
    assert in_process._mask(result, set()) is result


@pytest.mark.parametrize("values, result", [
    ({SECRET}, dict(a=[dict(b="x %s y" % SECRET)], c=True)),  # in a string deep down
    ({"41"}, dict(count=1041, ok=True)),  # in a number's text
    ({"ru"}, dict(flags=[True, False], changed=False)),  # in a boolean's text as remove_values reads it
    ({"on"}, dict(none=[None], changed=False)),  # in None's
    ({"na"}, dict(ratio=float("nan"))),  # in a special float's
    ({'a"b'}, dict(text='say a"b')),  # a value JSON escapes
    ({"a\\b"}, dict(path="c:a\\b")),
    ({"line\nnext"}, dict(text="line\nnext")),
    ({SECRET}, {SECRET: "as a key"}),
    ({SECRET}, dict(raw=b"bytes: " + SECRET.encode())),  # not JSON: walked
    ({SECRET}, dict(plain="nothing to hide", n=3, t=(1, "x"))),  # a tuple, which remove_values makes a list
    ({SECRET}, {1: "a key not a string"}),
    ({SECRET}, dict(plain="nothing to hide", n=3, x=1.5, l=[1, "x", None, True], d=dict(e=False))),
], ids=["string", "number", "boolean", "none", "nan", "quote", "backslash", "newline", "key", "bytes", "tuple",
        "int-key", "none-held"])
def test_the_shortcut_masks_as_remove_values_does(values, result):
    assert in_process._mask(result, values) == masked_by_remove_values(result, values)


def test_a_no_log_value_that_reads_like_a_boolean_leaves_the_result_booleans_alone():
    result = run_action(dict(secret="True"))
    assert result["changed"] is False
    assert "failed" not in result


# Validation ---------------------------------------------------------------------------------------

def test_an_unknown_option_fails_as_a_module_would():
    result = run_action(dict(bogus=1))
    assert result["failed"] is True
    assert result["msg"].startswith("Unsupported parameters for (probe) module: bogus.")


def test_a_wrong_type_fails_with_the_validator_message():
    result = run_action(dict(fail="maybe"))
    assert result["failed"] is True
    assert "fail" in result["msg"] and "bool" in result["msg"]


def test_a_deprecated_option_gives_the_deprecation_a_module_would():
    result = run_action(dict(old="x"))
    assert result["deprecations"] == [dict(msg="Param 'old' is deprecated. See the module docs for more information",
                                           version="2.0.0", date=None, collection_name="planetscale.cloud")]


def test_an_option_and_its_alias_both_set_give_the_warning_a_module_would():
    result = run_action(dict(name="a", label="b"))
    assert result["warnings"] == ["Both option name and its alias label are set."]


def test_without_deprecated_options_or_alias_conflicts_the_result_has_no_warnings():
    result = run_action(dict(name="a"))
    assert "warnings" not in result and "deprecations" not in result


# Invocation ---------------------------------------------------------------------------------------

def _has_inject_setting():
    return "INJECT_INVOCATION" in C.config.get_configuration_definitions()


def test_the_invocation_carries_the_validated_arguments_masked():
    task_vars = dict(ansible_inject_invocation=True) if _has_inject_setting() else {}
    result = run_action(dict(secret=SECRET, label="x"), task_vars=task_vars)
    args = result["invocation"]["module_args"]
    assert args["secret"] == "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"
    assert args["name"] == "x" and args["fail"] is False


@pytest.mark.skipif(not _has_inject_setting(), reason="this ansible-core always injects the invocation")
def test_the_invocation_is_left_out_when_the_setting_says_so():
    assert "invocation" not in run_action(dict(value="v"), task_vars=dict(ansible_inject_invocation=False))


# Falling back to the module path ------------------------------------------------------------------

def test_a_local_task_runs_in_process():
    assert make_action()._runs_in_process({}) is True


@pytest.mark.parametrize("switch", [False, "false", "no", "0"])
def test_the_switch_sends_the_task_to_the_module_path(switch):
    assert make_action()._runs_in_process({in_process.SWITCH: switch}) is False


def test_a_variable_that_is_not_a_string_is_its_own_value_with_no_template_engine():
    """The first template in a worker costs tenths of a millisecond: the switch unset, or a boolean, needs none."""
    action = make_action()
    action._templar = SimpleNamespace(template=lambda value: pytest.fail("templated %r" % (value,)))
    assert action._runs_in_process({}) is True
    assert action._runs_in_process({in_process.SWITCH: False}) is False


def test_a_variable_given_as_a_string_is_templated():
    action = make_action()
    action._templar = SimpleNamespace(template=lambda value: "no" if value == "{{ in_process }}" else value)
    assert action._runs_in_process({in_process.SWITCH: "{{ in_process }}"}) is False


def test_an_async_task_runs_as_a_module():
    assert make_action(async_val=30)._runs_in_process({}) is False


@pytest.mark.parametrize("transport", ["ssh", "paramiko", "winrm", None])
def test_a_host_not_reached_through_the_local_connection_runs_the_module_there(transport):
    assert make_action(transport=transport)._runs_in_process({}) is False


def test_a_controller_without_requests_runs_the_module(monkeypatch):
    monkeypatch.setattr(in_process, "HAS_REQUESTS", False)
    assert make_action()._runs_in_process({}) is False


@pytest.mark.parametrize("async_val,transport,expected", [(0, "local", "in process"), (5, "local", "module"),
                                                          (0, "ssh", "module")])
def test_run_dispatches_to_one_path(monkeypatch, async_val, transport, expected):
    monkeypatch.setattr(ActionBase, "run", lambda self, tmp=None, task_vars=None: dict(base=True))
    action = make_action(async_val=async_val, transport=transport)
    action._in_process_result = lambda task_vars: dict(path="in process")
    action._module_result = lambda task_vars: dict(path="module")
    assert action.run(task_vars={}) == dict(base=True, path=expected)


@pytest.mark.parametrize("native_async,calls_made", [(False, [True]), (True, [False, "removed"])])
def test_the_module_path_wraps_async_as_the_normal_action_does(monkeypatch, native_async, calls_made):
    action = make_action(async_val=10)
    action._connection = SimpleNamespace(transport="local", has_native_async=native_async)
    calls = []
    action._execute_module = lambda module_args, task_vars, wrap_async: calls.append(wrap_async) or dict(ok=1)
    monkeypatch.setattr(in_process.core_compat, "remove_module_tmpdir", lambda a: calls.append("removed"))
    assert action._module_result({}) == dict(ok=1)
    assert calls == calls_made  # a wrapped async run leaves its temporary directory to async_status


def test_the_module_path_removes_its_temporary_directory(monkeypatch):
    action = make_action()
    calls = []
    action._execute_module = lambda module_args, task_vars, wrap_async: calls.append(wrap_async) or dict(ok=1)
    monkeypatch.setattr(in_process.core_compat, "remove_module_tmpdir", lambda a: calls.append("removed"))
    action._module_result({})
    assert calls == [False, "removed"]


class Warner(Module):
    """Warns, then fails: a failure whose message no_log hides, and a warning that says what to do."""

    option_sets = (CONNECTION,)

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
    action._compute_environment_string = lambda raw_environment_out: None
    action._runs_in_process = lambda task_vars: path == "in_process"
    action._module_result = lambda task_vars: dict(changed=False, warnings=["2 passwords are named 'app': set id."])
    result = action.run(task_vars={})
    assert result["warnings"] == ["2 passwords are named 'app': set id."]
    assert displayed == (result["warnings"] if shown else [])


# The one action plugin: the module from the task ---------------------------------------------------

def task_action(action, collections=None):
    """The one action (plugins/action/user_info.py, every module's action file), for a task naming `action`."""
    found = make_action()
    found.module_class = None  # the instance finds it, as the action file's ActionModule does
    found._task.action, found._task.collections = action, collections
    return found


@pytest.mark.parametrize("action, collections", [
    ("planetscale.cloud.user_info", None),
    ("user_info", ["planetscale.cloud"]),  # the short name through the play's collections keyword
])
def test_the_action_runs_the_module_the_task_names(action, collections):
    from ansible_collections.planetscale.cloud.plugins.modules.user_info import UserInfo

    assert task_action(action, collections)._task_module() == "user_info"
    assert in_process.module_class_of("user_info") is UserInfo


def test_the_task_s_module_is_looked_up_once_a_task():
    """The plugin loader's lookup of a collection's module is not cached by ansible-core: once, not thrice, a task."""
    action = task_action("planetscale.cloud.user_info")
    looked_up, find = [], action._task_module
    action._task_module = lambda: looked_up.append(True) or find()
    assert action._stray_group_options() == [] and action._module_args() == {}
    assert action._module_class().__name__ == "UserInfo"
    assert looked_up == [True]


def test_the_action_refuses_a_module_of_another_collection():
    with pytest.raises(in_process.AnsibleActionFail, match="runs only the modules of planetscale.cloud, not 'ping'"):
        task_action("ping")._task_module()


def test_a_module_file_whose_class_is_ambiguous_is_an_error_not_a_guess(monkeypatch):
    module = SimpleNamespace(__name__="fake", One=type("One", (Module,), {"__module__": "fake"}),
                             Two=type("Two", (Module,), {"__module__": "fake"}))
    monkeypatch.setattr(in_process.importlib, "import_module", lambda name: module)
    with pytest.raises(in_process.AnsibleActionFail, match="must define one module class, not 2"):
        in_process.module_class_of("fake")


# The action group's options a module does not take ---------------------------------------------------

GROUP_DEFAULTS = {"group/planetscale.cloud.all": dict(client_id="app-id", client_secret=SECRET, api_timeout=7)}


def grouped_action(args, module_defaults=None, templated=lambda value: value):
    """Probe (CONNECTION only, no OAuth client) with the task's arguments as ansible-core merged them: the module
    defaults for the group first, the task's own arguments over them."""
    action = make_action(args)
    action._task.module_defaults = module_defaults if module_defaults is not None else [GROUP_DEFAULTS]
    action._task.action = "planetscale.cloud.probe"
    action._templar = SimpleNamespace(template=templated)
    action._task_module = lambda: "probe"
    return action


def test_module_defaults_for_the_group_reach_a_module_without_the_options_it_does_not_take():
    args = dict(client_id="app-id", client_secret=SECRET, api_timeout=7, value="v")
    action = grouped_action(args)
    assert action._stray_group_options() == []
    assert action._module_args() == dict(api_timeout=7, value="v")  # api_timeout: Probe takes CONNECTION
    result = action._in_process_result({})
    assert "failed" not in result and result["value"] == "v"
    assert SECRET not in repr(result)


def test_the_module_process_gets_the_same_arguments(monkeypatch):
    action = grouped_action(dict(client_id="app-id", client_secret=SECRET, value="v"))
    monkeypatch.setattr(in_process.core_compat, "remove_module_tmpdir", lambda a: None)
    seen = []
    action._execute_module = lambda module_args, task_vars, wrap_async: seen.append(module_args) or dict(ok=1)
    action._module_result({})
    assert seen == [dict(value="v")]


def test_the_group_s_values_are_compared_templated():
    action = grouped_action(dict(client_id="app-id"), [{"group/planetscale.cloud.all": dict(client_id="{{ id }}")}],
                            templated=lambda value: dict((k, "app-id") for k in value))
    assert action._stray_group_options() == [] and action._module_args() == {}


@pytest.mark.parametrize("args, module_defaults", [
    (dict(client_id="app-id"), []),  # in the task, no module_defaults
    (dict(client_id="mine", client_secret=SECRET), [GROUP_DEFAULTS]),  # the task's own value over the group's
    (dict(client_id="app-id"), [GROUP_DEFAULTS, {"planetscale.cloud.probe": dict(client_id="app-id")}]),
    (dict(client_id="app-id"), [GROUP_DEFAULTS, {"group/planetscale.cloud.all": dict(api_timeout=7)}]),  # replaced
])
def test_an_option_the_module_does_not_take_given_otherwise_fails_the_task_with_a_sentence(args, module_defaults,
                                                                                           monkeypatch):
    action = grouped_action(args, module_defaults)
    action._runs_in_process = lambda task_vars: pytest.fail("the task must fail before it runs")
    monkeypatch.setattr(ActionBase, "run", lambda self, tmp=None, task_vars=None: {})  # needs a task executor
    result = action.run(task_vars={})
    assert result["failed"] is True
    assert result["msg"] == (
        "probe does not take client_id. These options of the action group planetscale.cloud.all reach the modules "
        "that do not take them only through module_defaults for the group; set them there, or leave them out of the "
        "task.")
    assert SECRET not in repr(result)
