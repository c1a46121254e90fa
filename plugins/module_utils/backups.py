# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the modules of backups and backup policies know of the platform's records and rules."""

from __future__ import annotations

import re
from datetime import datetime, timezone

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import capital
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import Waiter
from ansible_collections.planetscale.cloud.plugins.module_utils.timestamps import parse_iso8601

STATES = ("pending", "running", "success", "failed", "canceled", "ignored")
ENDED_BADLY = ("failed", "canceled", "ignored")  # states a backup never leaves for success
RETENTION_UNITS = ["hour", "day", "week", "month", "year"]
FREQUENCY_UNITS = ["hour", "day", "week", "month"]
MAX_RETENTION = 1000
SCHEDULE_TIME = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]")
OLDEST = datetime.min.replace(tzinfo=timezone.utc)


def newest(records):
    """The newest of records (created_at, then id); one without a readable time counts as the oldest."""
    return max(records, key=lambda record: (parse_iso8601(record.get("created_at")) or OLDEST, str(record.get("id"))))


def check_retention(params):
    """Refuse, before any request, a retention the platform refuses."""
    value = params.get("retention_value")
    if value is not None and not 1 <= value <= MAX_RETENTION:
        raise ModuleFailure("retention_value must be from 1 to %d (in retention_unit), not %s." % (
            MAX_RETENTION, value))


def check_schedule(params):
    """Refuse, before any request, a schedule of a backup policy that cannot be."""
    check_retention(params)
    if params.get("frequency_value") is not None and params["frequency_value"] < 1:
        raise ModuleFailure("frequency_value must be 1 or more (in frequency_unit), not %s." % params["frequency_value"])
    time = params.get("schedule_time")
    if time is not None and not SCHEDULE_TIME.fullmatch(time):
        raise ModuleFailure("schedule_time must be a time of day HH:MM (UTC, 00:00 to 23:59), not %r." % time)
    for name, highest, what in (("schedule_day", 6, "a day of the week, 0 (Sunday) to 6 (Saturday)"),
                                ("schedule_week", 3, "a week of the month, 0 (the first) to 3 (the fourth)")):
        if params.get(name) is not None and not 0 <= params[name] <= highest:
            raise ModuleFailure("%s must be %s, not %s." % (name, what, params[name]))


def success(label):
    """The wait for a backup (label: "backup 'nightly' of branch 'main' of database 'shop'") to succeed; it ends at
    once, with a sentence, when the backup fails, is canceled or is deleted."""
    what = capital(label)

    def failed(backup):
        if backup is None:
            return "%s was deleted while waiting for it to succeed." % what
        if backup.get("state") in ENDED_BADLY:
            return ("%s ended %s: the platform did not take it. Take another one (state absent, then present, or "
                    "another name)." % (what, backup["state"]))
        return None
    return Waiter("%s to succeed" % label, done=lambda b: b.get("state") == "success", state=lambda b: b.get("state"),
                  failed=failed, key="backup")


def backup_guard(label, backup):
    """Refuse, before any write, to delete a backup the platform does not delete."""
    if backup.get("protected"):
        raise ModuleFailure("%s is protected, so the platform does not delete it: set protected to false (with state "
                            "present) first, then delete it." % capital(label))
    if backup.get("required"):
        raise ModuleFailure("%s was made by a required backup policy, so the platform does not delete it; it expires "
                            "by itself." % capital(label))
