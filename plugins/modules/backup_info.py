#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: backup_info
short_description: List the backups of a branch, or read one
version_added: 0.2.0
description:
  - Returns every backup of a branch that the filters select, newest first, walking all pages of the list, or the one
    backup named by O(id).
  - A backup that does not exist is not an error; RV(backups) is then empty. A branch, database or organization that
    does not exist is an error.
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
    description: The ID of one backup to read. RV(backups) then holds that backup, or nothing.
    type: str
  name:
    description: Return only the backups of this name (names are not unique).
    type: str
  state:
    description: Return only the backups in this state.
    type: str
    choices: [pending, running, success, failed, canceled, ignored]
  policy:
    description: Return only the backups that the backup policy of this ID made.
    type: str
  from:
    description: Return only the backups started after this time (ISO 8601, such as V(2026-01-01T00:00:00Z)).
    type: str
  to:
    description: Return only the backups started before this time (ISO 8601).
    type: str
  production:
    description: Return the backups only if the branch is a production branch (V(true)) or only if it is not (V(false)).
    type: bool
  deleted:
    description: Include deleted backups (the API's C(all)); they carry RV(backups[].deleted_at).
    type: bool
    default: false
  limit:
    description: Return at most this many backups. By default every backup is returned.
    type: int
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.backup
"""

EXAMPLES = r"""
- name: Find the newest successful backup of main
  planetscale.cloud.backup_info:
    organization: acme
    database: app
    branch: main
    state: success
    limit: 1
  register: latest

- name: Restore it into a new branch
  planetscale.cloud.branch:
    organization: acme
    database: app
    name: restore-drill
    parent_branch: main
    backup_id: "{{ latest.backups[0].id }}"
    cluster_size: PS_10
  when: latest.backups | length > 0

- name: List the backups of January that failed
  planetscale.cloud.backup_info:
    organization: acme
    database: app
    branch: main
    state: failed
    from: "2026-01-01T00:00:00Z"
    to: "2026-01-31T23:59:59Z"
"""

RETURN = r"""
backups:
  description:
    - The backups, newest first, as the API lists them. With O(id), a list of the one backup, or an empty list.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the backup, for O(planetscale.cloud.branch#module:backup_id).
      type: str
    name:
      description: The name of the backup.
      type: str
    state:
      description: V(pending), V(running), V(success), V(failed), V(canceled) or V(ignored).
      type: str
      sample: success
    protected:
      description: Whether the backup is protected from deletion.
      type: bool
    required:
      description: Whether a required backup policy made it.
      type: bool
    backup_policy:
      description: The policy that made it, or null for a backup taken on demand.
      type: dict
    created_at:
      description: When the backup was taken.
      type: str
    expires_at:
      description: When the platform deletes it, or null.
      type: str
    deleted_at:
      description: When it was deleted (with O(deleted)), or null.
      type: str
    restored_branches:
      description: The branches restored from it.
      type: list
      elements: dict
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule, ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.timestamps import parse_iso8601

STATES = ("pending", "running", "success", "failed", "canceled", "ignored")


FILTERS = ("state", "policy", "from", "to")


class BackupInfo(InfoModule):
    """A backup named by id that is absent is an empty list; its branch being absent is a failure."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = {
        "database": dict(type="str", required=True),
        "branch": dict(type="str", required=True),
        "id": dict(type="str"),
        "name": dict(type="str"),
        "state": dict(type="str", choices=list(STATES)),
        "policy": dict(type="str"),
        "from": dict(type="str"),
        "to": dict(type="str"),
        "production": dict(type="bool"),
        "deleted": dict(type="bool", default=False),
        "limit": dict(type="int"),
    }
    path_options = ("database", "branch", "id")
    must_exist = ("database", "branch")

    def validate(self):
        super().validate()
        for name in ("from", "to"):
            if self.params[name] is not None and parse_iso8601(self.params[name]) is None:
                raise ModuleFailure("%s must be an ISO 8601 time such as 2026-01-31T12:00:00Z, not %r." % (
                    name, self.params[name]))

    def run(self):
        backups = self.org_path("databases", self.params["database"], "branches", self.params["branch"], "backups")
        if self.params["id"] is not None:
            found = self.client.get("%s/%s" % (backups, self.params["id"]), missing_ok=True)
            if found is None:
                self.client.get(backups, params=dict(per_page=1))  # a missing branch, database or organization fails
                return dict(backups=[])
            return dict(backups=[found] if self.selects(found) else [])
        query = dict((name, self.params[name]) for name in FILTERS if self.params[name] is not None)
        if self.params["production"] is not None:
            query["production"] = str(self.params["production"]).lower()
        if self.params["deleted"]:
            query["all"] = "true"
        limit = None if self.params["name"] else self.params["limit"]  # the name is matched here, after the pages
        found = [backup for backup in self.items(backups, query or None, limit) if self.selects(backup)]
        return dict(backups=found[:self.params["limit"]] if self.params["limit"] else found)

    def selects(self, backup):
        """Whether a backup the API answered is one the options ask for (the name, and a state read by id)."""
        return all(self.params[name] in (None, backup.get(name)) for name in ("name", "state"))


def main():
    run_module(BackupInfo)


if __name__ == "__main__":
    main()
