# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writes what a playbook run did as JSON, for the test harness (tests/harness/ansible.py).

To the file named by HARNESS_RESULTS, at the end of the run: {"results": [...], "seconds": {...},
"retries": N, "recap": {...}}. A result is one task on one host, or one loop item (the loop as a
whole is not one): its task name, host, status (ok, changed, failed, skipped, unreachable),
whether its failure was ignored, its item label, and the result as callbacks get it (no_log
results censored; without internal keys and the exception), unless HARNESS_RESULT_BODIES=0. "seconds" is how long each task took on each
host; "recap" is the recap's counts per host.
"""

from __future__ import annotations

import json
import os
import time

from ansible.module_utils.common.json import AnsibleJSONEncoder
from ansible.plugins.callback import CallbackBase

DOCUMENTATION = r"""
name: harness_results
type: aggregate
short_description: A playbook run's results, task times and recap as JSON
description:
  - Test instrumentation of the collection's test harness; writes JSON to the file named by E(HARNESS_RESULTS).
requirements:
  - enabled in callbacks_enabled
"""

RECAP_NAMES = dict(ok="ok", changed="changed", unreachable="unreachable", failures="failed", skipped="skipped",
                   rescued="rescued", ignored="ignored")


class _Encoder(AnsibleJSONEncoder):
    def default(self, o):  # pylint: disable=method-hidden
        try:
            return super().default(o)
        except TypeError:
            return repr(o)


def _public(value, top=True):
    """The value without Ansible's internal keys (_ansible_...), and without the exception (a traceback,
    which the output shows instead, as ansible-core 2.19 and later fill it in for every failure)."""
    if isinstance(value, dict):
        return dict((key, _public(item, False)) for key, item in value.items()
                    if not str(key).startswith("_ansible_") and not (top and key == "exception"))
    if isinstance(value, list):
        return [_public(item, False) for item in value]
    return value


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "harness_results"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.started = {}
        self.results = []
        self.seconds = {}
        self.retries = 0
        self.bodies = os.environ.get("HARNESS_RESULT_BODIES", "1") != "0"

    def v2_playbook_on_task_start(self, task, is_conditional):
        self.started[task._uuid] = time.monotonic()

    def v2_playbook_on_handler_task_start(self, task):
        self.started[task._uuid] = time.monotonic()

    def _record(self, result, status, item=False, ignored=False):
        task, values = result._task, result._result
        name, host = task.get_name(), result._host.get_name()
        if not item:
            took = time.monotonic() - self.started.get(task._uuid, time.monotonic())
            self.seconds.setdefault(name, {})[host] = round(took, 3)
            if task.loop and "results" in values:
                return  # a loop: its items were recorded one by one
        entry = dict(task=name, host=host, status=status, ignored=ignored)
        if item:
            entry["item"] = self._get_item_label(values)
        if self.bodies:
            entry["result"] = _public(json.loads(json.dumps(values, cls=_Encoder)))
        self.results.append(entry)

    def v2_runner_on_ok(self, result):
        self._record(result, "changed" if result._result.get("changed") else "ok")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._record(result, "failed", ignored=ignore_errors)

    def v2_runner_on_skipped(self, result):
        self._record(result, "skipped")

    def v2_runner_on_unreachable(self, result):
        self._record(result, "unreachable")

    def v2_runner_item_on_ok(self, result):
        self._record(result, "changed" if result._result.get("changed") else "ok", item=True)

    def v2_runner_item_on_failed(self, result):
        self._record(result, "failed", item=True, ignored=bool(result._task.ignore_errors))

    def v2_runner_item_on_skipped(self, result):
        self._record(result, "skipped", item=True)

    def v2_runner_retry(self, result):
        self.retries += 1

    def v2_playbook_on_stats(self, stats):
        path = os.environ.get("HARNESS_RESULTS")
        if not path:
            return
        recap = dict((host, dict((RECAP_NAMES[key], count) for key, count in stats.summarize(host).items()
                                 if key in RECAP_NAMES))
                     for host in sorted(stats.processed))
        report = dict(results=self.results, seconds=self.seconds, retries=self.retries, recap=recap)
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as handle:
            json.dump(report, handle, cls=_Encoder)
