# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every option that names a branch, in every module, is held to the platform's rule for branch names, with the
sentence the branch module gives, before any request: the platform refuses other names (422), so no branch has one."""

from __future__ import annotations

import os

import pytest
from ansible.module_utils.common.arg_spec import ModuleArgumentSpecValidator

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.plugin_utils.in_process import module_class_of

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULES = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "plugins", "modules"))
                 if f.endswith(".py") and not f.startswith("_"))
# Modules whose option name names a branch (the others name one in an option called branch or *_branch).
NAME_IS_A_BRANCH = ("branch", "branch_info")
REFUSED = ("UPPER", "has space", "Main Branch", "-dev", "dev.1", "a" * 64)
SENTENCE = ("%s must be a branch name the platform accepts: 1 to 63 characters, lower-case letters, digits, '-' and "
            "'_', starting with a letter or digit; not %r.")


def module_class(name):
    return module_class_of(name)


def branch_options(name):
    """The options of a module that name a branch, from its argument spec."""
    spec = module_class(name).argument_spec
    named = [option for option, entry in spec.items() if entry.get("type") == "str" and (
        option == "branch" or option.endswith("_branch"))]
    return named + (["name"] if name in NAME_IS_A_BRANCH else [])


CASES = [(module, option) for module in MODULES for option in branch_options(module)]


def filler(entry):
    """A valid value for a required option."""
    if entry.get("choices"):
        return entry["choices"][0]
    return dict(str="shop", int=1, bool=False, list=[], dict={}).get(entry.get("type", "str"), "shop")


def run(server, module, **args):
    """Run a module with its required options given valid values, and args."""
    spec = module_class(module).spec()
    spec.pop("supports_check_mode")
    params = dict(organization="acme", service_token_id="svc", service_token="s3cret", api_url=server.url + "/v1",
                  api_retries=0)
    params.update((option, filler(entry)) for option, entry in spec["argument_spec"].items()
                  if entry.get("required") and option not in params)
    params.update(args)
    for group in spec["required_one_of"]:
        if all(params.get(option) is None for option in group):
            params[group[0]] = filler(spec["argument_spec"][group[0]])
    validation = ModuleArgumentSpecValidator(**spec).validate(params)
    assert not validation.error_messages
    return module_class(module)(validation.validated_parameters, TaskContext()).execute()


def test_the_options_naming_branches_are_the_ones_expected():
    """A new option naming a branch is found here by its name; the list shows what the rule covers."""
    assert CASES == [("backup", "branch"), ("backup_info", "branch"), ("branch", "parent_branch"), ("branch", "name"),
                     ("branch_change_info", "branch"), ("branch_info", "name"), ("branch_metrics_info", "branch"),
                     ("branch_schema_info", "branch"),
                     ("database", "default_branch"), ("deploy_request", "branch"), ("deploy_request", "into_branch"),
                     ("deploy_request_info", "branch"), ("deploy_request_info", "into_branch"),
                     ("keyspace", "branch"), ("keyspace_info", "branch"), ("password", "branch"),
                     ("password_info", "branch"), ("postgres_bouncer", "branch"),
                     ("postgres_bouncer_info", "branch"), ("postgres_extension_info", "branch"),
                     ("postgres_parameter_info", "branch"), ("postgres_role", "branch"),
                     ("postgres_role_info", "branch"), ("query_insights_info", "branch"), ("query_pattern_info", "branch"),
                     ("query_pattern_report", "branch"), ("traffic_budget", "branch"),
                     ("traffic_budget_info", "branch"), ("vschema", "branch")]
    assert all(sorted(module_class(module).branch_naming()) == sorted(branch_options(module)) for module in MODULES)


@pytest.mark.parametrize("module, option", CASES, ids=["%s-%s" % case for case in CASES])
def test_every_option_naming_a_branch_refuses_a_name_the_platform_refuses_before_any_request(server, module, option):
    for value in REFUSED:
        with pytest.raises(ModuleFailure) as caught:
            run(server, module, **{option: value})
        assert caught.value.msg == SENTENCE % (option, value)
    assert server.requests == []
