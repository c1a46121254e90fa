# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plays of the collection's modules run in this Python, without ansible-playbook: each task's module class
validated and executed as the in-process action runs it (plugins/plugin_utils/in_process.py), with its real
client (requests and urllib3's retries) against the emulator. For the suites that prove every module's rules
under faults at unit speed; what ansible-playbook adds (the module process, the action plugin, the output)
keeps its end-to-end runs (harness.ansible).

`Direct.run()` takes the plays harness.collection.play() builds and answers a harness.ansible.Run: its tasks,
recap and results as the results callback records them, and an output printed as ansible-playbook prints results
at -vvv (a task header, then the result as indented JSON; a no_log task's result censored), so that a
SecretWatch searches it as it searches a playbook's. A task may give name, one module of the collection,
register, no_log, ignore_errors, check_mode, diff and failed_when: false; its arguments and module_defaults are
templated with Jinja (native types, `omit` leaves an option out) from the variables: the emulator's
(emulator_vars), the extra variables and the registered results; a value of a subclass of str is not templated
(a test's !unsafe input). An exception other than the module's failure
is a traceback, in the result and the output, as the action plugin would show it.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import time
import traceback

from .ansible import Run
from .collection import FQCN, emulator_vars, module_classes

CENSORED = "the output has been hidden due to the fact that 'no_log: true' was specified for this result"
OMIT = "__omit_place_holder__direct"
TASK_KEYS = frozenset(("name", "register", "no_log", "ignore_errors", "check_mode", "diff", "failed_when"))


class Direct:
    """Runs plays of the collection's modules in this process (see the module's docstring).

    watch: a SecretWatch that searches every run's output; logs: a directory that keeps each run's output.
    """

    def __init__(self, watch=None, logs=None, log_prefix=""):
        self.watch = watch
        self.logs = logs
        self.log_prefix = log_prefix
        self.count = 0
        self.runs = []
        module_classes()  # the collection importable as ansible_collections.planetscale.cloud
        self._base = importlib.import_module("ansible_collections.planetscale.cloud.plugins.module_utils.base")
        self._classes = {}
        import jinja2.nativetypes  # pylint: disable=import-outside-toplevel

        self._jinja = jinja2.nativetypes.NativeEnvironment(undefined=jinja2.StrictUndefined)

    def module_class(self, name):
        """The module's class, found as the action plugin finds it: the Module subclass of its file that no other
        class there extends."""
        if name not in self._classes:
            module = importlib.import_module("ansible_collections.planetscale.cloud.plugins.modules." + name)
            defined = [value for value in vars(module).values() if isinstance(value, type)
                       and issubclass(value, self._base.Module) and value.__module__ == module.__name__]
            leaves = [cls for cls in defined if not any(other is not cls and issubclass(other, cls) for other in defined)]
            assert len(leaves) == 1, "plugins/modules/%s.py: %d module classes" % (name, len(leaves))
            self._classes[name] = leaves[0]
        return self._classes[name]

    def run(self, plays, extra_vars=None, *, emulator=None, label="plays", check=False, diff=False):
        """Run the plays' tasks in order, as ansible-playbook would on localhost; never raises on a failed task."""
        variables = dict(emulator_vars(emulator) if emulator is not None else {}, **(extra_vars or {}))
        lines, results, seconds = [], [], {}
        recap = dict(ok=0, changed=0, unreachable=0, failed=0, skipped=0, rescued=0, ignored=0)
        start = time.perf_counter()
        cpu = time.process_time()
        stopped = False
        for play in plays:
            lines.append("PLAY [%s] %s" % (play.get("name", "play"), "*" * 20))
            for entry in play["tasks"]:
                if stopped:
                    break
                name, status, result, ignored = self._task(entry, play.get("module_defaults") or {}, variables,
                                                           check, diff, seconds)
                results.append(dict(task=name, host="localhost", status=status, ignored=ignored,
                                    result=self._shown(entry, result)))
                lines.append(self._printed(entry, name, status, result))
                if status == "failed":
                    recap["ignored" if ignored else "failed"] += 1
                    stopped = not ignored
                else:
                    recap["ok"] += 1
                    recap["changed"] += status == "changed"
                if entry.get("register"):
                    variables[entry["register"]] = result
        output = "\n".join(lines) + "\n"
        elapsed = time.perf_counter() - start
        self.count += 1
        log_path = self._log(label, output, elapsed)
        run = Run(label, ["direct", label], output, 2 if recap["failed"] else 0, elapsed,
                  time.process_time() - cpu, log_path, dict(results=results, seconds=seconds,
                                                            recap=dict(localhost=recap)))
        self.runs.append(run)
        if self.watch is not None:
            self.watch.check(run)
        return run

    def _task(self, entry, defaults, variables, check, diff, seconds):
        """(name, status, result, ignored) of one task."""
        modules = [key for key in entry if key.startswith(FQCN)]
        unknown = [key for key in entry if key not in TASK_KEYS and key not in modules]
        assert len(modules) == 1 and not unknown, "a task of one module of the collection, not %r" % entry
        module = modules[0][len(FQCN):]
        name = entry.get("name") or modules[0]
        args = self._template(dict(defaults.get(modules[0]) or {}, **entry[modules[0]]), variables)
        began = time.perf_counter()
        result = self.execute(module, args, check_mode=entry.get("check_mode", check), diff=entry.get("diff", diff))
        seconds[name] = dict(localhost=time.perf_counter() - began)
        failed = bool(result.get("failed")) and entry.get("failed_when") is not False
        if not failed:
            result.pop("failed", None)
        status = "failed" if failed else "changed" if result.get("changed") else "ok"
        return name, status, result, failed and bool(entry.get("ignore_errors"))

    def execute(self, module, args, check_mode=False, diff=False):
        """One module's result for these arguments, as the in-process action makes it: the arguments validated
        against the module's spec (a failure names them), the class executed with a TaskContext (a ModuleFailure is
        a failed result with its sentence), warnings and deprecations in the result, no_log values masked. The progress
        lines of a wait are not (the action shows them at -v; a module process's are taken out by the action)."""
        # ansible-core's, as the action's (plugin_utils/core_compat.validate_arguments)
        from ansible.module_utils.common.arg_spec import ArgumentSpecValidator  # pylint: disable=import-outside-toplevel
        from ansible.module_utils.common.parameters import remove_values  # pylint: disable=import-outside-toplevel
        from ansible.module_utils.errors import UnsupportedError  # pylint: disable=import-outside-toplevel

        module_class = self.module_class(module)
        spec = dict(module_class.spec())
        spec.pop("supports_check_mode", None)
        validation = ArgumentSpecValidator(**spec).validate(dict(args))
        ctx = self._base.TaskContext(check_mode=bool(check_mode), diff=bool(diff))
        if validation.error_messages:
            msg = validation.errors.msg
            if isinstance(validation.errors[0], UnsupportedError):
                msg = "Unsupported parameters for (%s%s) module: %s" % (FQCN, module, msg)
            result = dict(failed=True, msg=msg)
        else:
            try:
                result = module_class(validation.validated_parameters, ctx).execute()
            except self._base.ModuleFailure as failure:
                result = dict(failure.result, failed=True, msg=failure.msg)
            except Exception as error:  # pylint: disable=broad-except  # what the action plugin shows as a traceback
                result = dict(failed=True, msg="Unexpected failure during module execution: %s" % error,
                              exception=traceback.format_exc())
        if ctx.warnings:
            result["warnings"] = ctx.warnings
        if ctx.deprecations:
            # as the action reports them, and as ansible-core keeps them: without a date or version that is None
            result["deprecations"] = [dict(dict((key, value) for key, value in deprecation.items() if value is not None),
                                           collection_name=deprecation.get("collection_name") or "planetscale.cloud")
                                      for deprecation in ctx.deprecations]
        kept = dict((key, value) for key, value in result.items() if value is None or isinstance(value, bool))
        result = remove_values(result, set(validation._no_log_values))  # pylint: disable=protected-access
        result.update(kept)
        result.setdefault("changed", False)
        return result

    def _template(self, value, variables):
        if isinstance(value, dict):
            templated = ((key, self._template(item, variables)) for key, item in value.items())
            return dict((key, item) for key, item in templated if not (isinstance(item, str) and item == OMIT))
        if isinstance(value, list):
            return [self._template(item, variables) for item in value]
        if type(value) is str and "{{" in value:  # pylint: disable=unidiomatic-typecheck  # a str subclass: !unsafe
            return self._jinja.from_string(value).render(dict(variables, omit=OMIT))
        return value

    @staticmethod
    def _shown(entry, result):
        """The result as callbacks get it: a no_log task's censored (its warnings and deprecations kept)."""
        if entry.get("no_log"):
            kept = dict((key, result[key]) for key in ("failed", "warnings", "deprecations") if key in result)
            return dict(kept, censored=CENSORED, changed=result.get("changed", False))
        return result

    def _printed(self, entry, name, status, result):
        """The task as -vvv prints it: its header, then its result (a failure's traceback before it)."""
        printed = dict(status="fatal" if status == "failed" else status, host="localhost")
        text = "\nTASK [%s] %s\n" % (name, "*" * 20)
        if "exception" in result and not entry.get("no_log"):
            text += "The full traceback is:\n%s\n" % result["exception"]
        text += "%(status)s: [%(host)s]%(failed)s => %(json)s\n" % dict(
            printed, failed=": FAILED!" if status == "failed" else "",
            json=json.dumps(self._shown(entry, result), indent=4, sort_keys=True))
        if status == "failed" and entry.get("ignore_errors"):
            text += "...ignoring\n"
        return text

    def _log(self, label, output, elapsed):
        if not self.logs:
            return None
        slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")[:80]
        path = os.path.join(self.logs, "%sdirect-%03d-%s.log" % (self.log_prefix, self.count, slug))
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("# %s, in this process\n\n%s\n# after %.1f seconds\n" % (label, output, elapsed))
        return path
