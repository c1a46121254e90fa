# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The in-process adapter: run a module's logic on the controller, without a module process.

A task that runs a module pays for a new Python process and an AnsiballZ payload; the
modules of this collection only send HTTP requests, so the action of every module (plugins/action/user_info.py,
which every other module's action file is, byte for byte) validates the same argument spec here and calls the
same logic. The result is what the
module would have returned: same validation messages and warnings, same failure shape, the
values of no_log options masked the same way.

The contract, each line tested in tests/unit/plugins/plugin_utils/test_in_process.py:
- the module runs the ordinary way instead (fallback) when the task is async, when the
  task's host is not reached through the local connection (the requests must leave from
  that host), when the controller's Python lacks requests, or when the variable
  planetscale_in_process is false;
- the validator's warnings and deprecations reach the result, as AnsibleModule reports them;
- no_log values are masked everywhere in the result, booleans and None kept;
- the invocation is added when a module would add it;
- the task's environment keyword is what the logic sees, and the controller's is restored;
- a no_log task's warnings are shown where ansible-core (before 2.19) would hide them with the result;
- the Clients of a task borrow the worker's sessions (plugin_utils/sessions.py), so the items of a loop
  share kept-alive connections;
- in a worker of a playbook run, those sessions' connections are kept across tasks by the run's connection keeper
  (plugin_utils/persist.py, keeper.py) unless planetscale_keep_connections is false; it ends after
  planetscale_keep_connections_timeout seconds (60) without a task, and with the run.
Private ansible-core APIs are used only through core_compat.
"""

from __future__ import annotations

import functools
import importlib
import json
import multiprocessing
import os
import re
from contextlib import contextmanager

from ansible import constants as C
from ansible.module_utils.common.parameters import remove_values
from ansible.module_utils.common.validation import check_type_bool, check_type_float
from ansible.errors import AnsibleActionFail
from ansible.executor.process.worker import WorkerProcess
from ansible.module_utils.errors import UnsupportedError
from ansible.plugins.action import ActionBase
from ansible.plugins.loader import module_loader
from ansible.release import __version__ as ANSIBLE_VERSION
from ansible.utils.display import Display

from ansible_collections.planetscale.cloud.plugins.module_utils.base import Module, ModuleFailure, TaskContext
from ansible_collections.planetscale.cloud.plugins.module_utils.client import HAS_REQUESTS
from ansible_collections.planetscale.cloud.plugins.module_utils.options import GROUP_OPTIONS
from ansible_collections.planetscale.cloud.plugins.plugin_utils import core_compat, persist
from ansible_collections.planetscale.cloud.plugins.plugin_utils.sessions import worker_pool

SWITCH = "planetscale_in_process"
PROGRESS = "waited"  # the key of a module process's result that holds its progress lines (module_utils/adapter.py)
KEEP = "planetscale_keep_connections"  # false: no connection outlives its task
KEEP_TIMEOUT = "planetscale_keep_connections_timeout"  # seconds the keeper waits for a next task
COLLECTION = "planetscale.cloud"
GROUP_KEY = "group/%s.all" % COLLECTION
STRAY = ("%s does not take %s. These options of the action group %s.all reach the modules that do not take them "
         "only through module_defaults for the group; set them there, or leave them out of the task.")
# Before ansible-core 2.19 a no_log task's result is hidden whole, its warnings with it. A module's warnings
# never carry a secret, and one may be the only word of what to do (several passwords share a name), so they
# are shown here.
NO_LOG_HIDES_WARNINGS = tuple(int(part) for part in ANSIBLE_VERSION.split(".")[:2]) < (2, 19)

display = Display()


class InProcessAction(ActionBase):
    """The action of every module of the collection (plugins/action/<module>.py, one file under every module's name).

    The module's logic class is found from the task's module (module_class_of); a subclass may set module_class.
    """

    module_class = None
    _passed = None  # _passed_through(), once a task
    TRANSFERS_FILES = False
    _supports_async = True  # served by the module path, as ansible.builtin.normal serves it

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        stray = self._stray_group_options()
        if stray:
            result.update(failed=True, msg=STRAY % (self._task.action.rpartition(".")[2], ", ".join(stray), COLLECTION))
        elif self._runs_in_process(task_vars):
            result.update(self._in_process_result(task_vars))
        else:
            result.update(self._module_result(task_vars))
        if getattr(self._task, "no_log", False) and NO_LOG_HIDES_WARNINGS:
            for warning in result.get("warnings") or []:
                display.warning(warning)
        return result

    def _runs_in_process(self, task_vars):
        """Whether this task can run here rather than as a module process (see the module docstring)."""
        if self._task.async_val or not HAS_REQUESTS:
            return False
        if getattr(self._connection, "transport", None) != "local":
            return False
        return check_type_bool(self._variable(task_vars, SWITCH, True))

    def _variable(self, task_vars, name, default):
        """A variable's value, templated; one that is not a string (the default, a boolean, a number) is its own
        value, and the template engine (some tenths of a millisecond the first time in a worker) is not needed."""
        value = task_vars.get(name, default)
        return self._templar.template(value) if isinstance(value, str) else value

    def _module_result(self, task_vars):
        """The module the ordinary way, as ansible.builtin.normal runs it, async included."""
        wrap_async = bool(self._task.async_val) and not getattr(self._connection, "has_native_async", False)
        result = self._execute_module(module_args=self._module_args(), task_vars=task_vars, wrap_async=wrap_async)
        if not wrap_async:
            core_compat.remove_module_tmpdir(self)
        for line in result.pop(PROGRESS, None) or ():  # a module process cannot print while it runs: shown now
            display.v(line, host=task_vars.get("inventory_hostname"))
        return result

    def _in_process_result(self, task_vars=None):
        # The whole run sees the task's environment, as a module process would: the options'
        # fallbacks, and what requests reads from it (proxies, CA bundle).
        with _environment(core_compat.task_environment(self)):
            return self._validate_and_execute(task_vars)

    def _validate_and_execute(self, task_vars):
        module_class = self._module_class()
        validation = core_compat.validate_arguments(module_class.spec(), self._module_args())
        host = (task_vars or {}).get("inventory_hostname")
        ctx = TaskContext(check_mode=bool(self._task.check_mode), diff=bool(self._task.diff),
                          progress=lambda line: display.v(line, host=host))  # shown at -v as it happens
        ctx.sessions = worker_pool()  # the items of a loop share this worker's connections
        ctx.sessions.keeper = self._keeper(task_vars)  # and the tasks of the run share the keeper's
        ctx.debug = display.debug
        for warning in validation.warnings:
            ctx.warn(warning)
        for deprecation in validation.deprecations:
            ctx.deprecations.append(deprecation)
        if validation.errors:
            msg = validation.msg
            if isinstance(validation.errors[0], UnsupportedError):
                msg = "Unsupported parameters for (%s) module: %s" % (self._task.action, msg)
            result = dict(failed=True, msg=msg)
        else:
            try:
                result = module_class(validation.params, ctx).execute()
            except ModuleFailure as failure:
                result = dict(failure.result, failed=True, msg=failure.msg)
        if _inject_invocation(task_vars):
            result["invocation"] = dict(module_args=validation.params)
        if ctx.warnings:
            result["warnings"] = ctx.warnings
        if ctx.deprecations:
            result["deprecations"] = [dict(d, collection_name=d.get("collection_name") or "planetscale.cloud")
                                      for d in ctx.deprecations]
        return _mask(result, validation.no_log_values)

    def _module_class(self):
        if self.module_class is None:
            self.module_class = module_class_of(self._task_module())  # this action's task: looked up once
        return self.module_class

    def _keeper(self, task_vars):
        """The run's connection keeper for this worker, or None: off, or not in a worker of a playbook run."""
        task_vars = task_vars or {}
        if not isinstance(multiprocessing.current_process(), WorkerProcess):
            return None
        if not check_type_bool(self._variable(task_vars, KEEP, True)):
            return None
        try:
            idle = check_type_float(self._variable(task_vars, KEEP_TIMEOUT, persist.DEFAULT_IDLE))
        except TypeError:
            idle = -1
        if not 0 < idle <= 86400:
            raise AnsibleActionFail("%s must be a number of seconds above 0 (at most 86400), not %r."
                                    % (KEEP_TIMEOUT, task_vars.get(KEEP_TIMEOUT)))
        return keeper_link(idle, display.debug)

    def _passed_through(self):
        """The options of the action group in the task's arguments that the module does not take, each with
        whether module_defaults for the group gave it (the same value there, and none for the module itself)."""
        if self._passed is not None:
            return self._passed
        self._passed = self._look_up_passed_through()
        return self._passed

    def _look_up_passed_through(self):
        args = self._task.args
        taken = self._module_class().taken_options()
        names = [name for name in GROUP_OPTIONS if name in args and name not in taken]
        if not names:
            return {}  # the usual case: nothing to look up, and module_defaults need not be templated again
        merged = {}
        for defaults in getattr(self._task, "module_defaults", None) or ():
            merged.update(defaults)  # as ansible-core merges them: a later entry for a key replaces an earlier
        group = merged.get(GROUP_KEY) or {}
        group = self._templar.template(group) if group else {}
        own = (merged.get("%s.%s" % (COLLECTION, self._task_module())) or {}) if merged else {}
        return dict((name, name in group and name not in own and group[name] == args[name]) for name in names)

    def _stray_group_options(self):
        """The options of the action group the task gives a module that does not take them, not through the group."""
        return sorted(name for name, from_group in self._passed_through().items() if not from_group)

    def _module_args(self):
        """The task's arguments without the options of the action group that the module does not take: those
        come from module_defaults for the group (_stray_group_options fails a task that gives them otherwise)."""
        passed = self._passed_through()
        return dict((name, value) for name, value in self._task.args.items() if name not in passed)

    def _task_module(self):
        """The name of the task's module in this collection: the task may name it short (collections keyword)."""
        context = module_loader.find_plugin_with_context(self._task.action, collection_list=self._task.collections)
        collection, _dot, name = (context.resolved_fqcn or "").rpartition(".")
        if not context.resolved or collection != COLLECTION:
            raise AnsibleActionFail("The action of %s runs only the modules of %s, not %r."
                                    % (COLLECTION, COLLECTION, self._task.action))
        return name


@functools.lru_cache(maxsize=None)
def module_class_of(name):
    """The logic class of the module `name`: the Module subclass its file defines that no other class there extends
    (a file may also hold the helper classes of its resource)."""
    module = importlib.import_module("ansible_collections.%s.plugins.modules.%s" % (COLLECTION, name))
    defined = [value for value in vars(module).values()
               if isinstance(value, type) and issubclass(value, Module) and value.__module__ == module.__name__]
    leaves = [cls for cls in defined if not any(other is not cls and issubclass(other, cls) for other in defined)]
    if len(leaves) != 1:
        raise AnsibleActionFail("The module %s.%s must define one module class, not %d." % (COLLECTION, name, len(leaves)))
    return leaves[0]


_LINKS = {}


def keeper_link(idle, debug=None):
    """The link of this process to its run's keeper, one per process and timeout (a loop's items share it)."""
    key = (os.getpid(), idle)
    if key not in _LINKS:
        _LINKS[key] = persist.link_for_worker(idle, debug)
    return _LINKS[key]


def _inject_invocation(task_vars):
    """Whether a module would add the invocation key: always before ansible-core 2.21, then as its setting says."""
    if "INJECT_INVOCATION" not in C.config.get_configuration_definitions():
        return True
    return check_type_bool(C.config.get_config_value("INJECT_INVOCATION", variables=task_vars or {}))


# The text of the values JSON writes otherwise (true, null, NaN, -Infinity), where remove_values also looks
SCALAR_TEXTS = ("True", "False", "None", "nan", "-inf")
JSON_ESCAPED = re.compile(r'["\\\x00-\x1f]')  # characters JSON writes as escapes


def _may_hold(result, no_log_values):
    """Whether remove_values could find a no_log value in the result: it occurs in the result's JSON text, or may
    occur where that text cannot tell (a value that JSON escapes or that a boolean, None or a special float holds
    as remove_values reads them, a result that JSON does not give back as it is)."""
    if any(not isinstance(value, str) or not value or JSON_ESCAPED.search(value)
           or any(value in text for text in SCALAR_TEXTS) for value in no_log_values):
        return True
    try:
        text = json.dumps(result, ensure_ascii=False)
        same = json.loads(text) == result  # not so with a tuple (remove_values makes it a list), a key not a string
    except (TypeError, ValueError):
        return True
    return not same or any(value in text for value in no_log_values)


def _mask(result, no_log_values):
    """Mask no_log values in the result, keeping booleans and None as AnsibleModule does.

    remove_values copies every value of the result (for 5,000 members, 0.7 s); a result that holds none of the
    values (as its JSON text tells, in about a tenth of that) is answered as it is."""
    if not _may_hold(result, no_log_values):
        return result
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


_PREPARED = []  # [True] once prepare() did the run's part in this process


def prepare(action_name):
    """Called by the action file when ansible-playbook's own process loads it, under the task's module's name
    (plugins/action/<module>.py), to plan a task: do there, once a run, what each task's worker would otherwise do
    again.

    Every task runs in a worker forked from ansible-playbook, with a copy of what that process had loaded and
    computed. What it had not, each worker did anew: import the module's code (about 1 ms), build ansible-core's
    Jinja lexer and load its filter and test plugins on the first template with a filter (some 10 ms a task of
    module_defaults as common as `"{{ token | default(omit) }}"`), requests' first-call work (about 1 ms), and
    read the run's start time from /proc (most of a millisecond for a large ansible-playbook). Done here, the
    workers inherit it. Only in a process that runs an ansible command (its command-line arguments set) and was
    not itself forked for a task; anything that fails here is left to the worker, as before.
    """
    from ansible import context  # pylint: disable=import-outside-toplevel

    if not context.CLIARGS or multiprocessing.parent_process() is not None:
        return
    steps = [lambda: module_class_of(action_name.rpartition(".")[2])]  # an action file runs once a process
    if not _PREPARED:
        _PREPARED.append(True)
        steps += [_prime_templating, _prime_requests, persist.remember_run]
    for step in steps:
        try:
            step()
        except Exception:  # pylint: disable=broad-except  # the task says it, in its worker
            pass


PRIMER = "{{ [] | default([]) is sequence }}"  # a filter and a test: both kinds of plugins loaded


def _prime_templating():
    from ansible.parsing.dataloader import DataLoader  # pylint: disable=import-outside-toplevel
    from ansible.template import Templar  # pylint: disable=import-outside-toplevel
    try:
        from ansible.template import trust_as_template  # pylint: disable=import-outside-toplevel
    except ImportError:  # before ansible-core 2.19 every string is a template
        trust_as_template = str
    Templar(loader=DataLoader(), variables={}).template(trust_as_template(PRIMER))


def _prime_requests():
    """What requests does first for a request, in a Client's order: nothing is sent (.invalid is never a host)."""
    if not HAS_REQUESTS:
        return
    import requests  # pylint: disable=import-outside-toplevel

    url = "https://planetscale.invalid/v1/organizations?page=1"
    session = requests.Session()
    prepared = session.prepare_request(requests.Request("GET", url, headers={"Accept": "application/json"}))
    session.merge_environment_settings(prepared.url, {}, None, None, None)
