# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every use of an ansible-core API that is not public, each in one function.

The in-process adapter does on the controller what AnsibleModule does in a module process.
Where that needs something ansible-core keeps private, it is reached here and nowhere else,
and tests/unit/plugins/plugin_utils/test_core_compat.py runs each function against the
ansible-core of both pinned versions, so a release that changes one fails that test first.
"""

from __future__ import annotations

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

ALIAS_WARNING = "Both option {option} and its alias {alias} are set."


class Validation:
    """The outcome of validating a task's arguments: what AnsibleModule keeps of it."""

    def __init__(self, params, errors, no_log_values, warnings, deprecations):
        self.params = params
        self.errors = errors.errors  # ansible-core's validation errors (empty when valid)
        self.msg = errors.msg if errors.errors else None  # their message, as AnsibleModule fails with it
        self.no_log_values = no_log_values
        self.warnings = warnings  # sentences, as AnsibleModule would warn them
        self.deprecations = deprecations  # dicts: msg, version, date, collection_name


def validate_arguments(spec, args):
    """Validate args against a module's spec (AnsibleModule's keyword arguments).

    ArgumentSpecValidator, not ModuleArgumentSpecValidator: the latter reports its warnings and
    deprecations through ansible-core's process-wide lists (ansible-core < 2.19) or straight to the
    display (later), so in a worker they were lost or shown apart from the task. Here they come
    back as values, and the adapter puts them into the task's result as a module would.
    """
    spec = dict(spec)
    spec.pop("supports_check_mode", None)
    result = ArgumentSpecValidator(**spec).validate(dict(args))
    warnings = [ALIAS_WARNING.format(option=w["option"], alias=w["alias"]) for w in result._warnings]
    deprecations = [dict(msg=d["msg"], version=d.get("version"), date=d.get("date"),
                         collection_name=d.get("collection_name")) for d in result._deprecations]
    return Validation(result.validated_parameters, result.errors, set(result._no_log_values), warnings, deprecations)


def task_environment(action):
    """The task's environment keyword, templated and merged as a module process would receive it."""
    environment = {}
    action._compute_environment_string(raw_environment_out=environment)
    return environment


def remove_module_tmpdir(action):
    """Remove the remote temporary directory a module run left, as ansible.builtin.normal does."""
    action._remove_tmp_path(action._connection._shell.tmpdir)
