# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A task's result, and what ansible-playbook's default output printed: the task headers, and each
result it printed as JSON (indented, as at -vvv and more), with where it stands in the output.

For the questions about the output itself (where a secret showed; whether two runs printed
the same); what a run did comes from the results callback (harness.ansible.Run.tasks).
"""

from __future__ import annotations

import dataclasses
import json
import re

from .emulator import HarnessError

TASK_HEADER = re.compile(r"^TASK \[(?P<name>.*)\] \**$", re.M)
RESULT_START = re.compile(
    r"^(?P<status>ok|changed|failed|fatal|skipping): \[(?P<host>[^\]]+)\]"
    r"(?: => \(item=(?P<item>.*?)\)| \(item=(?P<failed_item>.*?)\))?(?:: FAILED!)? => \{$", re.M)


@dataclasses.dataclass(repr=False)
class TaskResult:
    """A task's result on one host, or one loop item's: what the results callback recorded (Run.tasks;
    status ok, changed, failed, skipped or unreachable), or what the output printed (printed(); status as
    printed: ok, changed, failed, fatal or skipping, and span, where its JSON stands in the output)."""

    name: str
    host: str
    status: str
    result: dict
    item: object = None
    ignored: bool = False
    span: tuple = None

    @property
    def failed(self):
        return self.status in ("failed", "fatal", "unreachable") or bool(self.result.get("failed"))

    @property
    def changed(self):
        return self.status == "changed" or bool(self.result.get("changed"))

    def __repr__(self):
        return "<%s [%s] %s: %s>" % (self.name, self.host, self.status, json.dumps(self.result)[:400])


def task_names(output):
    """The name of every task header, in order."""
    return [header.group("name") for header in TASK_HEADER.finditer(output)]


def printed(output, where="the output"):
    """Every result the output printed as JSON, in order."""
    found = []
    headers = list(TASK_HEADER.finditer(output))
    for index, header in enumerate(headers):
        end = headers[index + 1].start() if index + 1 < len(headers) else len(output)
        for start in RESULT_START.finditer(output, header.end(), end):
            brace = start.end() - 1
            close = output.find("\n}\n", brace, end + 2)
            if close < 0:
                close = output.find("\n}", brace)
            try:
                result = json.loads(output[brace:close + 2])
            except ValueError as error:
                raise HarnessError("Unparsable result of task %r in %s: %s" % (header.group("name"), where, error))
            found.append(TaskResult(header.group("name"), start.group("host"), start.group("status"), result,
                                    start.group("item") or start.group("failed_item"), span=(brace, close + 2)))
    return found
