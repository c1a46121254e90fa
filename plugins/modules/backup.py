#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: backup
short_description: Take, protect and delete backups of a branch
version_added: 0.2.0
description:
  - Ensures that a backup of a branch exists, by default waits until it has succeeded, and sets O(protected).
    A backup that fails or is canceled ends the wait at once with a sentence.
  - Ensures that a backup does not exist. A protected backup, or one a required backup policy made, is not deleted;
    the task fails before anything is sent.
  - A backup is named by O(id), or by O(name). Names are not unique; of several backups of one name the newest is
    the one managed, with a warning.
  - O(retention_unit), O(retention_value) and O(emergency) only shape a new backup; they are not compared.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the database.
    type: str
    required: true
  branch:
    description: The name of the branch.
    type: str
    required: true
  id:
    description: The ID of the backup. One of O(id) and O(name) is required.
    type: str
  name:
    description: The name of the backup; a new backup gets it.
    type: str
  state:
    description:
      - V(present) takes the backup if no backup of the branch has the name (or O(id)), and sets O(protected).
      - V(absent) deletes it; a backup that does not exist is not a change.
    type: str
    choices: [present, absent]
    default: present
  retention_unit:
    description: The unit of O(retention_value). By default the platform keeps a backup until it is deleted.
    type: str
    choices: [hour, day, week, month, year]
  retention_value:
    description: How long the platform keeps a new backup, 1 to 1000 O(retention_unit).
    type: int
  emergency:
    description: Take the backup at once, even if it slows the database (PostgreSQL only).
    type: bool
  protected:
    description: Whether the backup is protected from deletion.
    type: bool
  wait:
    description: Wait until the backup has succeeded, polling with growing intervals.
  wait_timeout:
    description: Seconds to wait for the backup to succeed. The task fails after that, with its last state.
    default: 3600
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.api.wait
  - planetscale.cloud.attributes.resource
seealso:
  - module: planetscale.cloud.backup_info
  - module: planetscale.cloud.backup_policy
"""

EXAMPLES = r"""
- name: Take a backup before a migration, keep it a week, protect it, and wait until it has succeeded
  planetscale.cloud.backup:
    organization: acme
    database: app
    branch: main
    name: before-migration-42
    retention_unit: week
    retention_value: 1
    protected: true
  register: taken

- name: Restore it into a new branch
  planetscale.cloud.branch:
    organization: acme
    database: app
    name: restored
    parent_branch: main
    backup_id: "{{ taken.backup.id }}"
    cluster_size: PS_10

- name: Unprotect the backup
  planetscale.cloud.backup:
    organization: acme
    database: app
    branch: main
    id: "{{ taken.backup.id }}"
    protected: false

- name: Delete the backup
  planetscale.cloud.backup:
    organization: acme
    database: app
    branch: main
    id: "{{ taken.backup.id }}"
    state: absent
"""

RETURN = r"""
backup:
  description:
    - The backup (id, name, state, protected, required, size, expires_at, restored_branches...). In check mode, when
      it would be taken, the fields known before taking it.
  returned: O(state=present)
  type: dict
  sample: {id: k2l3m4n5o6p7, name: before-migration-42, state: success, protected: true, required: false}
"""

from datetime import datetime, timezone

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.backups import RETENTION_UNITS, check_retention
from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.options import (
    CONNECTION, CREDENTIALS, ORGANIZATION, WAIT)
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import Resource, capital
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import Waiter
from ansible_collections.planetscale.cloud.plugins.module_utils.timestamps import parse_iso8601

ENDED_BADLY = ("failed", "canceled", "ignored")  # states a backup never leaves for success

OLDEST = datetime.min.replace(tzinfo=timezone.utc)


def newest(records):
    """The newest of records (created_at, then id); one without a readable time counts as the oldest."""
    return max(records, key=lambda record: (parse_iso8601(record.get("created_at")) or OLDEST, str(record.get("id"))))


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


CREATE_OPTIONS = ("retention_unit", "retention_value", "emergency")


class Backup(Resource):
    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION, WAIT)
    argument_spec = dict(
        database=dict(type="str", required=True),
        branch=dict(type="str", required=True),
        id=dict(type="str"),
        name=dict(type="str"),
        retention_unit=dict(type="str", choices=RETENTION_UNITS),
        retention_value=dict(type="int"),
        emergency=dict(type="bool"),
        protected=dict(type="bool"),
        wait_timeout=dict(type="int", default=3600),
    )
    required_one_of = (("id", "name"),)
    required_together = (("retention_unit", "retention_value"),)
    path_options = ("database", "branch", "id")
    names = ("name",)
    kind = "backup"
    api_path = ("databases", "{database}", "branches", "{branch}", "backups")
    fields = ("name", "protected")

    def __init__(self, params, ctx=None):
        super().__init__(params, ctx)
        self.warned = False

    def validate(self):
        super().validate()
        check_retention(self.params)

    def label(self):
        return "backup %r of branch %r of database %r" % (self.params["name"] or self.params["id"],
                                                          self.params["branch"], self.params["database"])

    def read(self):
        if self.params["id"]:
            found = self.client.get(self.url(self.params["id"]), missing_ok=True)
            if found is None and self.params["state"] == "present":
                raise ModuleFailure("%s does not exist (no backup of the branch has id %r); leave id out and give "
                                    "name to take a new backup." % (capital(self.label()), self.params["id"]))
            return found
        named = [b for b in self.client.paginate(self.url()) if b.get("name") == self.params["name"]]
        if len(named) > 1 and not self.warned:
            self.warned = True
            self.ctx.warn("%d backups of branch %r are named %r (IDs %s); the newest is the one managed. Give id to "
                          "name another one." % (len(named), self.params["branch"], self.params["name"],
                                                 ", ".join(str(b.get("id")) for b in named)))
        return newest(named) if named else None

    def wanted(self, resource):
        fields = super().wanted(resource)
        if resource is not None:
            fields.pop("name", None)  # with id, name is not compared: renaming is not something the API does
        return fields

    def predict(self, resource, changes):
        return dict(resource or dict(state="pending", protected=False), **changes)

    def create(self, values):
        body = dict((name, self.params[name]) for name in ("name",) + CREATE_OPTIONS if self.params[name] is not None)
        return self.client.post(self.url(), json=body)

    def guard(self, resource):
        if self.params["state"] == "absent":
            backup_guard(self.label(), resource)

    def after_present(self, resource, changed):
        if not self.params["wait"] or resource.get("state") == "success" or self.ctx.check_mode:
            return resource, changed
        backup_id = resource["id"]
        backup = success(self.label()).wait(lambda: self.client.get(self.url(backup_id), missing_ok=True),
                                            self.params["wait_timeout"], current=resource, changed=changed)
        return backup, changed

    def result_keys(self, resource):
        if resource.get("state") in ("failed", "canceled") and not self.params["wait"]:
            self.ctx.warn("%s is %s: the platform did not take it." % (capital(self.label()), resource["state"]))
        return {self.kind: resource}


def main():
    run_module(Backup)


if __name__ == "__main__":
    main()
