# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The module adapter: AnsibleModule in, the module's logic, exit_json/fail_json out (with the progress lines)."""

from __future__ import annotations

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.module_utils.client import HAS_REQUESTS, REQUESTS_IMPORT_ERROR


def run_module(module_class):
    module = AnsibleModule(**module_class.spec())
    if not HAS_REQUESTS:
        module.fail_json(msg=missing_required_lib("requests"), exception=REQUESTS_IMPORT_ERROR)
    ctx = TaskContext(check_mode=module.check_mode, diff=module._diff,
                      warn=module.warn, deprecate=module.deprecate)
    ctx.debug = module.debug
    failure = None
    try:
        result = module_class(module.params, ctx).execute()
    except ModuleFailure as error:
        failure = error
    if failure is not None:
        # outside the except clause: fail_json called inside one adds the Python traceback to the result, which
        # -vvv prints ("The full traceback is") under a failure that is a sentence by design
        module.fail_json(msg=failure.msg, **_with_progress(failure.result, ctx))
    module.exit_json(**_with_progress(result, ctx))


def _with_progress(result, ctx):
    """The result with the task's progress lines under waited (the action plugin shows them at -v, and takes them
    out): a module process cannot print while it runs."""
    return dict(result, waited=ctx.waited) if ctx.waited else result
