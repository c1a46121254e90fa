#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: traffic_budget_info
short_description: List the traffic budgets of a PostgreSQL branch, by name or by query pattern
version_added: 0.3.0
description:
  - Lists the traffic budgets (Database Traffic Control) of a PostgreSQL branch with their rules, every page of them.
  - With O(name), only the budget of that name (an empty list when there is none).
  - With O(fingerprint), only the budgets with a rule on that query pattern, as query insights shows them.
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
    description: The name of a budget.
    type: str
  fingerprint:
    description: The fingerprint of a query pattern; only the budgets that apply to it are listed.
    type: str
  keyspace:
    description: The keyspace of the query pattern. Only with O(fingerprint).
    type: str
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.traffic_budget
  - module: planetscale.cloud.query_pattern_info
"""

EXAMPLES = r"""
- name: List the traffic budgets of the main branch
  planetscale.cloud.traffic_budget_info:
    organization: acme
    database: pgapp
    branch: main
  register: budgets

- name: Show the budgets that are enforced
  ansible.builtin.debug:
    msg: "{{ budgets.traffic_budgets | selectattr('mode', 'equalto', 'enforce') | map(attribute='name') }}"

- name: Which budgets apply to a slow query pattern?
  planetscale.cloud.traffic_budget_info:
    organization: acme
    database: pgapp
    branch: main
    fingerprint: 7a3d2c1b0e9f8a76
  register: applying
"""

RETURN = r"""
traffic_budgets:
  description:
    - The budgets (id, name, mode, capacity, rate, burst, concurrency, warning_threshold, rules, created_at...); a limit
      that is not set is null (unlimited). Each rule has its id, kind, fingerprint, keyspace and tags (key, value,
      source).
  returned: always
  type: list
  elements: dict
  sample:
    - id: tb1a2b3c4d5e
      name: reports
      mode: enforce
      rate: 20
      rules: [{id: tr9f8e7d6c5b, kind: match, fingerprint: 7a3d2c1b0e9f8a76, keyspace: null, tags: []}]
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.capacity import NOT_FOR_THIS_BRANCH, refuse_other_kinds
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION


class TrafficBudgetInfo(InfoModule):
    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        branch=dict(type="str", required=True),
        name=dict(type="str"),
        fingerprint=dict(type="str"),
        keyspace=dict(type="str", no_log=False),  # a keyspace name, not a key
    )
    required_by = dict(keyspace="fingerprint")
    path_options = ("database", "branch", "fingerprint")
    must_exist = ("database", "branch")

    def run(self):
        try:
            return self.budgets()
        except ApiError as error:  # the platform refuses traffic control on a MySQL branch (422): say so
            if error.status in NOT_FOR_THIS_BRANCH:
                refuse_other_kinds(self, "traffic budgets", error)
            raise

    def budgets(self):
        branch = self.org_path("databases", self.params["database"], "branches", self.params["branch"])
        if self.params["fingerprint"] is None:
            found = self.items(branch + "/traffic/budgets")
        else:
            keyspace = dict(keyspace=self.params["keyspace"]) if self.params["keyspace"] else None
            found = self.items(branch + self.path("insights", self.params["fingerprint"], "traffic", "budgets"),
                               params=keyspace)
        return dict(traffic_budgets=[budget for budget in found if self.params["name"] in (None, budget.get("name"))])


def main():
    run_module(TrafficBudgetInfo)


if __name__ == "__main__":
    main()
