#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: backup_policy
short_description: Manage the backup policies of a database
version_added: 0.2.0
description:
  - Ensures that a backup policy of a database, named by O(name), exists with the target, frequency, retention and
    schedule given, changing only what differs, in one request.
  - Ensures that a backup policy does not exist. The platform's required policies (C(required) in RV(backup_policy))
    are not deleted; the task fails before anything is sent. They can be changed.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the database.
    type: str
    required: true
  name:
    description: The name of the backup policy, which names it in the database.
    type: str
    required: true
  state:
    description:
      - V(present) creates the policy if no policy of the database has the name, and updates what differs.
      - V(absent) deletes it; a policy that does not exist is not a change.
    type: str
    choices: [present, absent]
    default: present
  target:
    description: Whether the policy backs up production or development branches. The platform's default is V(production).
    type: str
    choices: [production, development]
  frequency_value:
    description: How often the policy takes a backup, in O(frequency_unit). Required to create a policy.
    type: int
  frequency_unit:
    description: The unit of O(frequency_value). Required to create a policy.
    type: str
    choices: [hour, day, week, month]
  retention_value:
    description: How long its backups are kept, 1 to 1000 O(retention_unit). Required to create a policy.
    type: int
  retention_unit:
    description: The unit of O(retention_value). Required to create a policy.
    type: str
    choices: [hour, day, week, month, year]
  schedule_time:
    description: The time of day of the backups, V(HH:MM) in UTC. The platform's default is V(00:00).
    type: str
  schedule_day:
    description: The day of the week of the backups, V(0) (Sunday) to V(6) (Saturday), for weekly and monthly policies.
    type: int
  schedule_week:
    description: The week of the month of the backups, V(0) (the first) to V(3) (the fourth), for monthly policies.
    type: int
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.resource
seealso:
  - module: planetscale.cloud.backup_policy_info
  - module: planetscale.cloud.backup
"""

EXAMPLES = r"""
- name: Back up production every Sunday at 03:30 UTC and keep the backups a quarter
  planetscale.cloud.backup_policy:
    organization: acme
    database: app
    name: weekly
    target: production
    frequency_value: 1
    frequency_unit: week
    schedule_day: 0
    schedule_time: "03:30"
    retention_value: 3
    retention_unit: month

- name: Keep the backups of the platform's required policy three days
  planetscale.cloud.backup_policy:
    organization: acme
    database: app
    name: default
    retention_value: 3

- name: Remove a policy
  planetscale.cloud.backup_policy:
    organization: acme
    database: app
    name: weekly
    state: absent
"""

RETURN = r"""
backup_policy:
  description:
    - The backup policy (id, name, target, the frequency, retention and schedule, required, last_ran_at,
      next_run_at). In check mode, when it would be created, the fields known before creating it.
  returned: O(state=present)
  type: dict
  sample: {id: p1q2r3, name: weekly, target: production, frequency_value: 1, frequency_unit: week, required: false}
"""

import re

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.backups import RETENTION_UNITS, check_retention
from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import Resource, capital

FREQUENCY_UNITS = ["hour", "day", "week", "month"]

SCHEDULE_TIME = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]")


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


SCHEDULE = ("target", "frequency_value", "frequency_unit", "retention_value", "retention_unit", "schedule_time",
            "schedule_day", "schedule_week")


class BackupPolicy(Resource):
    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        name=dict(type="str", required=True),
        target=dict(type="str", choices=["production", "development"]),
        frequency_value=dict(type="int"),
        frequency_unit=dict(type="str", choices=FREQUENCY_UNITS),
        retention_value=dict(type="int"),
        retention_unit=dict(type="str", choices=RETENTION_UNITS),
        schedule_time=dict(type="str"),
        schedule_day=dict(type="int"),
        schedule_week=dict(type="int"),
    )
    path_options = ("database",)
    names = ("name",)
    kind = "backup_policy"
    api_path = ("databases", "{database}", "backup-policies")
    fields = ("name",) + SCHEDULE
    required_to_create = ("frequency_value", "frequency_unit", "retention_value", "retention_unit")

    def validate(self):
        super().validate()
        check_schedule(self.params)

    def label(self):
        return "backup policy %r of database %r" % (self.params["name"], self.params["database"])

    found = None  # the policy the first read found by name

    def read(self):
        """The policy by name, from the list; read again (after a lost answer) by the ID of the one found: one
        request."""
        if self.found is not None:
            return self.client.get(self.url(self.found["id"]), missing_ok=True)
        self.found = next((policy for policy in self.client.paginate(self.url())
                           if policy.get("name") == self.params["name"]), None)
        return self.found

    def predict(self, resource, changes):
        return dict(resource or dict(required=False), **changes)

    def guard(self, resource):
        if self.params["state"] == "absent" and resource.get("required"):
            raise ModuleFailure("%s is required by the platform, which does not delete it; change its frequency, "
                                "retention or schedule instead (state present)." % capital(self.label()))


def main():
    run_module(BackupPolicy)


if __name__ == "__main__":
    main()
