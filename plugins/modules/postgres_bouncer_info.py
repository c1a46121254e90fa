#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: postgres_bouncer_info
short_description: List the dedicated PgBouncers of a PostgreSQL branch and their resize requests
version_added: 0.3.0
description:
  - Returns the dedicated PgBouncers of a PostgreSQL branch, or the one O(name) names, walking all pages of the list.
  - With O(resize_requests=true), also returns their resize requests, newest first (of the bouncer O(name) names,
    or of every bouncer of the branch).
  - A branch without bouncers, or a O(name) no bouncer has, is not an error; RV(bouncers) is then empty. A branch,
    database or organization that does not exist is an error.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the PostgreSQL database.
    type: str
    required: true
  branch:
    description: The name of the branch.
    type: str
    required: true
  name:
    description: Return only the bouncer of this name.
    type: str
  resize_requests:
    description: Also return the resize requests (RV(resize_requests)).
    type: bool
    default: false
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.postgres_bouncer
"""

EXAMPLES = r"""
- name: List the PgBouncers of a branch
  planetscale.cloud.postgres_bouncer_info:
    organization: acme
    database: pgapp
    branch: main
  register: found

- name: Show their names and sizes
  ansible.builtin.debug:
    msg: "{{ found.bouncers | items2dict(key_name='name', value_name='sku') }}"

- name: The resize requests of the branch's bouncers
  planetscale.cloud.postgres_bouncer_info:
    organization: acme
    database: pgapp
    branch: main
    resize_requests: true
  register: resizes
"""

RETURN = r"""
bouncers:
  description: The bouncers, in the order the API lists them.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the bouncer.
      type: str
    name:
      description: Its name.
      type: str
    target:
      description: V(primary), V(replica) or V(replica_az_affinity).
      type: str
    sku:
      description: Its size (C(name) such as V(PGB_10), C(display_name), C(cpu), C(ram) in bytes).
      type: dict
    replicas_per_cell:
      description: Bouncer nodes per availability zone.
      type: int
    parameters:
      description: Its PgBouncer parameters (C(name), C(value), C(default_value), C(parameter_type), C(options)...).
      type: list
      elements: dict
    branch:
      description: Its branch (C(id), C(name)).
      type: dict
    created_at:
      description: When it was created.
      type: str
    updated_at:
      description: When it last changed.
      type: str
resize_requests:
  description:
    - The resize requests, newest first (C(id), C(state) V(pending), V(resizing), V(completed) or V(canceled), C(sku),
      C(previous_sku), C(target), C(replicas_per_cell), C(parameters), C(bouncer), C(started_at), C(completed_at)).
  returned: O(resize_requests=true)
  type: list
  elements: dict
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION


class PostgresBouncerInfo(InfoModule):
    """The branch's bouncers (or one), and their resize requests when asked."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        branch=dict(type="str", required=True),
        name=dict(type="str"),
        resize_requests=dict(type="bool", default=False),
    )
    path_options = ("database", "branch", "name")
    must_exist = ("database", "branch")

    def run(self):
        name = self.params["name"]
        if name is not None:
            found = self.client.get(self.branch_path("bouncers", name), missing_ok=True)
            result = dict(bouncers=[found] if found is not None else [])
        else:
            result = dict(bouncers=self.items(self.branch_path("bouncers")))
        if self.params["resize_requests"]:
            if name is None:
                result["resize_requests"] = self.items(self.branch_path("bouncer-resizes"))
            else:
                result["resize_requests"] = self.items(self.branch_path("bouncers", name, "resizes")) if \
                    result["bouncers"] else []
        return result

    def branch_path(self, *segments):
        return self.org_path("databases", self.params["database"], "branches", self.params["branch"], *segments)


def main():
    run_module(PostgresBouncerInfo)


if __name__ == "__main__":
    main()
