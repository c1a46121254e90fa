#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: maintenance_schedule_info
short_description: List the maintenance schedules of a database with their windows, or read one
version_added: 0.3.0
description:
  - Returns the maintenance schedules of a database, walking all pages of the list, or the one named by O(id). Each
    schedule carries its maintenance windows in RV(maintenance_schedules[].windows), every page of them.
  - A schedule says when the platform may run maintenance on the database (a day of the week, an hour in UTC, a
    duration in hours), when the last window started and when the next one is due, and whether it is required (for
    example a pending Vitess or MySQL version update with a deadline).
  - A schedule that does not exist is not an error; RV(maintenance_schedules) is then empty. A database or
    organization that does not exist is an error.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the database.
    type: str
    required: true
  id:
    description: The ID of one schedule to read. RV(maintenance_schedules) then holds it, or nothing.
    type: str
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
"""

EXAMPLES = r"""
- name: Read the maintenance schedules of a database
  planetscale.cloud.maintenance_schedule_info:
    organization: acme
    database: app
  register: maintenance

- name: Say when the next maintenance window of each schedule is due
  ansible.builtin.debug:
    msg: "{{ item.name }}: next window {{ item.next_window_datetime }} for {{ item.duration }} hours"
  loop: "{{ maintenance.maintenance_schedules }}"
  loop_control:
    label: "{{ item.name }}"

- name: Show the required maintenance and its deadline
  ansible.builtin.debug:
    msg: "{{ item.name }} is required before {{ item.deadline_at }}; its windows so far: {{ item.windows | length }}"
  loop: "{{ maintenance.maintenance_schedules | selectattr('required') }}"
  loop_control:
    label: "{{ item.name }}"
"""

RETURN = r"""
maintenance_schedules:
  description: The schedules, as the API lists them, each with its windows. With O(id), a list of the one
    schedule, or an empty list.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the schedule.
      type: str
    name:
      description: Its display name.
      type: str
    enabled:
      description: Whether the schedule is enabled.
      type: bool
    required:
      description: Whether the maintenance is required (it then has a C(deadline_at)).
      type: bool
    day:
      description: The day of the week, 0 (Sunday) to 6 (Saturday), or 7 for every day.
      type: int
    hour:
      description: The hour of the day in UTC (0-23) a window starts at.
      type: int
    week:
      description: The week of the month (0-3) of a monthly schedule.
      type: int
    duration:
      description: How long a window lasts, in hours.
      type: int
    frequency_value:
      description: Every how many C(frequency_unit) a window comes.
      type: int
    frequency_unit:
      description: V(day), V(week), V(month) or V(once).
      type: str
    last_window_datetime:
      description: When the last window started (ISO 8601).
      type: str
    next_window_datetime:
      description: When the next window is due (ISO 8601).
      type: str
    expires_at:
      description: When a one-time schedule expires (ISO 8601), or null.
      type: str
    deadline_at:
      description: The deadline of a required schedule (ISO 8601), or null.
      type: str
    pending_vitess_version_update:
      description: Whether a Vitess version update is pending.
      type: bool
    pending_vitess_version:
      description: The pending Vitess version, or null.
      type: str
    pending_mysql_version_update:
      description: Whether a MySQL version update is pending.
      type: bool
    pending_mysql_version:
      description: The pending MySQL version, or null.
      type: str
    created_at:
      description: When the schedule was created (ISO 8601).
      type: str
    updated_at:
      description: When it last changed (ISO 8601).
      type: str
    windows:
      description: The schedule's maintenance windows, as the API lists them.
      type: list
      elements: dict
      contains:
        id:
          description: The ID of the window.
          type: str
        started_at:
          description: When it started (ISO 8601), or null.
          type: str
        finished_at:
          description: When it finished (ISO 8601), or null while it runs.
          type: str
        created_at:
          description: When it was created (ISO 8601).
          type: str
        updated_at:
          description: When it last changed (ISO 8601).
          type: str
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION


class MaintenanceScheduleInfo(InfoModule):
    """A schedule named by id that is absent is an empty list; its database being absent is a failure."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        id=dict(type="str"),
    )
    path_options = ("database", "id")
    must_exist = ("database",)

    def run(self):
        url = self.org_path("databases", self.params["database"], "maintenance-schedules")
        if self.params["id"] is not None:
            found = self.client.get(self.schedule(self.params["id"]), missing_ok=True)
            if found is None:
                self.client.get(url, params=dict(per_page=1))  # a missing database or organization fails
            schedules = [found] if found is not None else []
        else:
            schedules = self.items(url)
        ids = [self.client.record_id(schedule, "a maintenance schedule") for schedule in schedules]
        for schedule, schedule_id in zip(schedules, ids):
            schedule["windows"] = self.items(self.schedule(schedule_id, "windows"))
        return dict(maintenance_schedules=schedules)

    def schedule(self, schedule_id, *more):
        return self.org_path("databases", self.params["database"], "maintenance-schedules", schedule_id, *more)


def main():
    run_module(MaintenanceScheduleInfo)


if __name__ == "__main__":
    main()
