# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The in-process adapter: run a module's logic on the controller, without a module process.

A task that runs a module pays for a new Python process and an AnsiballZ payload; the
modules of this collection only send HTTP requests, so the action plugin of the same name
validates the same argument spec here and calls the same logic. The result is what the
module would have returned: same validation messages, same failure shape, the values of
no_log options masked the same way.

The module runs the ordinary way instead when the task is async, when the task's host is
not reached through the local connection (the requests must leave from that host), when
the controller's Python lacks requests, or when the variable planetscale_in_process is false.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from ansible import constants as C
from ansible.release import __version__ as ANSIBLE_VERSION
from ansible.module_utils.common.arg_spec import ModuleArgumentSpecValidator
from ansible.module_utils.common.parameters import remove_values
from ansible.module_utils.common.validation import check_type_bool
from ansible.module_utils.errors import UnsupportedError
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.module_utils.client import HAS_REQUESTS

SWITCH = "planetscale_in_process"
# Before ansible-core 2.19 a no_log task's result is hidden whole, its warnings with it. A module's warnings
# never carry a secret, and one may be the only word of what to do (several passwords share a name), so they
# are shown here.
NO_LOG_HIDES_WARNINGS = tuple(int(part) for part in ANSIBLE_VERSION.split(".")[:2]) < (2, 19)

display = Display()


class InProcessAction(ActionBase):
    """Subclasses set module_class to the module's logic class."""

    module_class = None
    TRANSFERS_FILES = False
    _supports_async = True  # served by the module path, as ansible.builtin.normal serves it

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        if not self._in_process(task_vars):
            result.update(self._run_module(task_vars))
        else:
            result.update(self._run_in_process(task_vars))
        if self._task.no_log and NO_LOG_HIDES_WARNINGS:
            for warning in result.get("warnings") or []:
                display.warning(warning)
        return result

    def _run_module(self, task_vars):
        """The module the ordinary way, as ansible.builtin.normal runs it, async included."""
        wrap_async = bool(self._task.async_val) and not getattr(self._connection, "has_native_async", False)
        result = self._execute_module(task_vars=task_vars, wrap_async=wrap_async)
        if not wrap_async:
            self._remove_tmp_path(self._connection._shell.tmpdir)
        return result

    def _in_process(self, task_vars):
        if self._task.async_val or not HAS_REQUESTS:
            return False
        if getattr(self._connection, "transport", None) != "local":
            return False
        return check_type_bool(self._templar.template(task_vars.get(SWITCH, True)))

    def _run_in_process(self, task_vars=None):
        # The whole run sees the task's environment, as a module process would: the options'
        # fallbacks, and what requests reads from it (proxies, CA bundle).
        with _environment(self._task_environment()):
            return self._validate_and_execute(task_vars)

    def _validate_and_execute(self, task_vars):
        spec = self.module_class.spec()
        spec.pop("supports_check_mode")
        validation = ModuleArgumentSpecValidator(**spec).validate(dict(self._task.args))
        no_log_values = validation._no_log_values
        params = validation.validated_parameters

        ctx = TaskContext(check_mode=bool(self._task.check_mode), diff=bool(self._task.diff))
        if validation.error_messages:
            error = validation.errors[0]
            msg = validation.errors.msg
            if isinstance(error, UnsupportedError):
                msg = "Unsupported parameters for (%s) module: %s" % (self._task.action, msg)
            result = dict(failed=True, msg=msg)
        else:
            try:
                result = self.module_class(params, ctx).execute()
            except ModuleFailure as failure:
                result = dict(failure.result, failed=True, msg=failure.msg)
        if _inject_invocation(task_vars):
            result["invocation"] = dict(module_args=params)
        if ctx.warnings:
            result["warnings"] = ctx.warnings
        if ctx.deprecations:
            result["deprecations"] = [dict(d, collection_name="planetscale.cloud") for d in ctx.deprecations]
        return _mask(result, no_log_values)

    def _task_environment(self):
        environment = {}
        self._compute_environment_string(raw_environment_out=environment)
        return environment


def _inject_invocation(task_vars):
    """Whether a module would add the invocation key: always before ansible-core 2.21, then as its setting says."""
    if "INJECT_INVOCATION" not in C.config.get_configuration_definitions():
        return True
    return check_type_bool(C.config.get_config_value("INJECT_INVOCATION", variables=task_vars or {}))


def _mask(result, no_log_values):
    """Mask no_log values in the result, keeping booleans and None as AnsibleModule does."""
    preserved = {k: v for k, v in result.items() if v is None or isinstance(v, bool)}
    masked = remove_values(result, no_log_values)
    masked.update(preserved)
    return masked


@contextmanager
def _environment(task_environment):
    """The environment a module would see: the controller's, updated with the task's environment keyword.

    Only the variables the task sets are changed and restored: a loop runs its items in one worker.
    """
    changes = dict((str(k), str(v)) for k, v in task_environment.items())
    saved = dict((name, os.environ.get(name)) for name in changes)
    os.environ.update(changes)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
