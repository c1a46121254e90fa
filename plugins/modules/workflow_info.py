#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: workflow_info
short_description: List the MoveTables workflows of a database, or read one
version_added: 0.3.0
description:
  - Returns every workflow of a Vitess database, walking all pages of the list, or those active during a time range
    (O(between)).
  - With O(number) or O(name), returns that one workflow as a read of it gives it, with its data check (its
    C(vdiff)) where the platform gives one. Of the workflows with one name, the newest (highest number) is the one,
    as for M(planetscale.cloud.workflow).
  - A workflow that does not exist is not an error; RV(workflows) is then empty. A database or organization that does
    not exist is an error.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the database.
    type: str
    required: true
  name:
    description: The name of one workflow to read.
    type: str
  number:
    description: The number of one workflow to read.
    type: int
  between:
    description:
      - Only the workflows active during this time range, two ISO 8601 times joined by C(..), such as
        V(2026-11-01T00:00:00Z..2026-11-30T23:59:59Z); a time without a zone is in UTC. The platform filters the list.
      - Not with O(name) or O(number).
    type: str
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.workflow
"""

EXAMPLES = r"""
- name: List the workflows of a database
  planetscale.cloud.workflow_info:
    organization: acme
    database: app
  register: listed

- name: Show the names of the workflows still in progress
  ansible.builtin.debug:
    msg: "{{ listed.workflows | rejectattr('state', 'in', finished) | map(attribute='name') }}"
  vars:
    finished: [completed, complete, cancelled]

- name: Read one workflow with its data check
  planetscale.cloud.workflow_info:
    organization: acme
    database: app
    name: move-orders
  register: one

- name: List the workflows active in November 2026
  planetscale.cloud.workflow_info:
    organization: acme
    database: app
    between: 2026-11-01T00:00:00Z..2026-11-30T23:59:59Z
"""

RETURN = r"""
workflows:
  description: The workflows, as the platform gives them, newest first. With O(name) or O(number), a list of the one
    workflow, or an empty list.
  returned: success
  type: list
  elements: dict
  contains:
    number:
      description: The number of the workflow in its database, for O(planetscale.cloud.workflow#module:number).
      type: int
      sample: 3
    name:
      description: The name of the workflow.
      type: str
    state:
      description: Its state, such as V(copying), V(running), V(switched_primaries), V(cutover) or V(completed)
        (the platform may say V(complete)).
      type: str
    source_keyspace:
      description: The keyspace the tables move from (its C(name) and C(id)).
      type: dict
    target_keyspace:
      description: The keyspace the tables move to (its C(name) and C(id)).
      type: dict
    verify_data_at:
      description: When its data was last checked, or null.
      type: str
    verified_data_stale:
      description: Whether the platform calls that check stale.
      type: bool
    created_at:
      description: When the workflow was created.
      type: str
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule, ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.timestamps import parse_iso8601
from ansible_collections.planetscale.cloud.plugins.module_utils.workflows import (
    newest_named, read_workflow, workflow_path)


class WorkflowInfo(InfoModule):
    """A workflow named by name or number that is absent is an empty list; its database being absent is a failure."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        name=dict(type="str"),
        number=dict(type="int"),
        between=dict(type="str"),
    )
    mutually_exclusive = (("name", "number", "between"),)
    path_options = ("database",)
    must_exist = ("database",)

    def validate(self):
        super().validate()
        if self.params["name"] is not None and not self.params["name"].strip():
            raise ModuleFailure("name must not be empty.")
        if self.params["number"] is not None and self.params["number"] < 1:
            raise ModuleFailure("number must be 1 or more, not %s." % self.params["number"])
        between = self.params["between"]
        if between is not None:
            times = [parse_iso8601(part) for part in between.split("..")] if between.count("..") == 1 else [None]
            if None in times:
                raise ModuleFailure("between must be two ISO 8601 times joined by '..', such as "
                                    "2026-11-01T00:00:00Z..2026-11-30T23:59:59Z, not %r." % between)
            if times[0] > times[1]:
                raise ModuleFailure("between starts (%s) after it ends (%s): no workflow can be active in it." % tuple(
                    between.split("..")))

    def run(self):
        if self.params["number"] is not None:
            found = [read_workflow(self, self.params["number"])]
        elif self.params["name"] is not None:
            newest = newest_named(self, self.params["name"])  # the list may leave the data check out: read it whole
            whole = None if newest is None else self.client.get(workflow_path(self, newest["number"]), missing_ok=True)
            found = [whole or newest]
        else:
            between = dict(between=self.params["between"]) if self.params["between"] else None
            found = sorted(self.items(workflow_path(self), params=between),
                           key=lambda workflow: -int(workflow.get("number") or 0))
        return dict(workflows=[workflow for workflow in found if workflow is not None])


def main():
    run_module(WorkflowInfo)


if __name__ == "__main__":
    main()
