# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Records how long each task took on each host, for the reliability suite's time bounds.

Writes {"<task name>": {"<host>": seconds}} as JSON to the file named by RELIABILITY_TIMINGS.
"""

from __future__ import annotations

import json
import os
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = r"""
name: reliability_timer
type: aggregate
short_description: Seconds each task took on each host
description:
  - Test instrumentation of the reliability suite; writes JSON to the file named by E(RELIABILITY_TIMINGS).
requirements:
  - enabled in callbacks_enabled
"""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "reliability_timer"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.started = {}
        self.seconds = {}

    def v2_playbook_on_task_start(self, task, is_conditional):
        self.started[task._uuid] = time.monotonic()

    def _done(self, result, *args, **kwargs):
        task = result._task
        took = time.monotonic() - self.started.get(task._uuid, time.monotonic())
        self.seconds.setdefault(task.get_name(), {})[result._host.get_name()] = round(took, 3)

    v2_runner_on_ok = v2_runner_on_failed = v2_runner_on_skipped = v2_runner_on_unreachable = _done

    def v2_playbook_on_stats(self, stats):
        path = os.environ.get("RELIABILITY_TIMINGS")
        if path:
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(self.seconds, handle)
