#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: backup_policy_info
short_description: List the backup policies of a database, or read one
version_added: 0.3.0
description:
  - Returns every backup policy of a database, walking all pages of the list, or the one named by O(id) or O(name).
  - A policy that does not exist is not an error; RV(backup_policies) is then empty. A database or organization that
    does not exist is an error.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the database.
    type: str
    required: true
  id:
    description: The ID of one backup policy to read. RV(backup_policies) then holds that policy, or nothing.
    type: str
  name:
    description: Return only the policy of this name (the name that M(planetscale.cloud.backup_policy) finds it by).
    type: str
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.backup_policy
  - module: planetscale.cloud.backup_info
"""

EXAMPLES = r"""
- name: List the backup policies of a database
  planetscale.cloud.backup_policy_info:
    organization: acme
    database: app
  register: policies

- name: Show when each policy runs next
  ansible.builtin.debug:
    msg: "{{ policies.backup_policies | items2dict(key_name='name', value_name='next_run_at') }}"

- name: Read the platform's required policy
  planetscale.cloud.backup_policy_info:
    organization: acme
    database: app
    name: default
  register: required
"""

RETURN = r"""
backup_policies:
  description: The backup policies, as the API lists them. With O(id) or O(name), a list of the one policy, or an empty
    list.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the policy.
      type: str
    name:
      description: Its name, which O(planetscale.cloud.backup_policy#module:name) names it by.
      type: str
    display_name:
      description: The name shown for it.
      type: str
    target:
      description: Whether it backs up V(production) or V(development) branches.
      type: str
    frequency_value:
      description: How often it takes a backup, in RV(backup_policies[].frequency_unit).
      type: int
    frequency_unit:
      description: V(hour), V(day), V(week) or V(month).
      type: str
    retention_value:
      description: How long its backups are kept, in RV(backup_policies[].retention_unit).
      type: int
    retention_unit:
      description: V(hour), V(day), V(week), V(month) or V(year).
      type: str
    schedule_time:
      description: The time of day of its backups, V(HH:MM) in UTC.
      type: str
    schedule_day:
      description: The day of the week of its backups, V(0) (Sunday) to V(6), or null.
      type: int
    schedule_week:
      description: The week of the month of its backups, V(0) to V(3), or null.
      type: int
    required:
      description: Whether the platform requires the policy (it is never deleted; it can be changed).
      type: bool
    last_ran_at:
      description: When it last took a backup, or null.
      type: str
    next_run_at:
      description: When it takes the next one.
      type: str
    created_at:
      description: When the policy was created.
      type: str
    updated_at:
      description: When it last changed.
      type: str
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION


class BackupPolicyInfo(InfoModule):
    """A policy named by id that is absent is an empty list; its database being absent is a failure."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        id=dict(type="str"),
        name=dict(type="str"),
    )
    path_options = ("database", "id")
    must_exist = ("database",)

    def run(self):
        policies = self.org_path("databases", self.params["database"], "backup-policies")
        if self.params["id"] is not None:
            found = self.client.get("%s/%s" % (policies, self.params["id"]), missing_ok=True)
            if found is None:
                self.client.get(policies, params=dict(per_page=1))  # a missing database or organization fails
            found = [found] if found is not None else []
        else:
            found = self.items(policies)
        return dict(backup_policies=[policy for policy in found if self.params["name"] in (None, policy.get("name"))])


def main():
    run_module(BackupPolicyInfo)


if __name__ == "__main__":
    main()
