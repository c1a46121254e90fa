#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: branch_info
short_description: List the branches of a database, or read one
version_added: 0.1.0
description:
  - Returns every branch of a database, walking all pages of the list, or the one branch named by O(name).
  - A branch that does not exist is not an error; RV(branches) is then empty. A database or organization
    that does not exist is an error.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description:
      - The name of the database.
    type: str
    required: true
  name:
    description:
      - The name of one branch to read. RV(branches) then holds that branch, or nothing if it does not exist.
    type: str
  production:
    description:
      - Return only production branches (V(true)) or only development branches (V(false)).
      - By default both kinds are returned.
    type: bool
  limit:
    description:
      - Return at most this many branches. By default every branch is returned.
    type: int
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.branch
"""

EXAMPLES = r"""
- name: List every branch of a database
  planetscale.cloud.branch_info:
    organization: acme
    database: app
  register: result

- name: Show the branches that are not ready yet
  ansible.builtin.debug:
    msg: "{{ result.branches | rejectattr('ready') | map(attribute='name') | list }}"

- name: List the production branches only
  planetscale.cloud.branch_info:
    organization: acme
    database: app
    production: true
  register: production

- name: Read one branch
  planetscale.cloud.branch_info:
    organization: acme
    database: app
    name: main
  register: main

- name: Fail unless the branch exists and is ready
  ansible.builtin.assert:
    that:
      - main.branches | length == 1
      - main.branches[0].ready
    fail_msg: The branch main of app does not exist or is not ready.
"""

RETURN = r"""
branches:
  description:
    - The branches, in the order the API lists them.
    - With O(name), a list of the one branch, or an empty list when the branch does not exist.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the branch.
      type: str
    name:
      description: The name of the branch.
      type: str
      sample: main
    parent_branch:
      description: The name of the branch this one was created from, or null.
      type: str
    production:
      description: Whether this is a production branch.
      type: bool
    ready:
      description: Whether the branch is ready to serve queries.
      type: bool
    state:
      description: The state of the branch.
      type: str
      sample: ready
    kind:
      description: The database engine.
      type: str
      sample: mysql
    region:
      description: The region of the branch (slug, display_name, provider, and so on).
      type: dict
    cluster_name:
      description: The cluster size of the branch (from C(cluster_rate_name) where the platform's record names it so).
      type: str
    safe_migrations:
      description: Whether safe migrations are enabled.
      type: bool
    mysql_edge_address:
      description: The address to connect to.
      type: str
    html_url:
      description: The URL of the branch in the web application.
      type: str
    created_at:
      description: When the branch was created (ISO 8601).
      type: str
    updated_at:
      description: When the branch was last updated (ISO 8601).
      type: str
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.branches import with_cluster_name
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION


class BranchInfo(InfoModule):
    """A named branch that is absent is an empty list; its database or organization being absent is a failure."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        name=dict(type="str"),
        production=dict(type="bool"),
        limit=dict(type="int"),
    )
    path_options = ("database", "name")
    must_exist = ("database",)
    branch_options = ("name",)  # names a branch: held to the branch-name rule

    def run(self):
        database, name, production = self.params["database"], self.params["name"], self.params["production"]
        if name is None:
            params = None if production is None else dict(production=str(production).lower())
            found = self.items(self.org_path("databases", database, "branches"), params, self.params["limit"])
            return dict(branches=[with_cluster_name(branch) for branch in found])
        branch = self.client.get(self.org_path("databases", database, "branches", name), missing_ok=True)
        if branch is None:
            self.client.get(self.org_path("databases", database))  # a missing database or organization fails here
            return dict(branches=[])
        return dict(branches=[with_cluster_name(branch)] if production in (None, branch.get("production")) else [])


def main():
    run_module(BranchInfo)


if __name__ == "__main__":
    main()
