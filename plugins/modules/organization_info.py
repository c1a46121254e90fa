#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: organization_info
short_description: Read the settings of an organization, and list the organizations the credentials can see
version_added: 0.3.0
description:
  - Returns the organization (its billing email, whether the identity provider manages its members' roles, its
    invoice budget, its plan, single sign-on, the number of databases...).
  - With O(all_organizations), also every organization the credentials can see, every page read.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  all_organizations:
    description:
      - Also list every organization the credentials can see (a service token sees those it belongs to) in
        RV(organizations).
    type: bool
    default: false
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.organization
  - module: planetscale.cloud.audit_log_info
"""

EXAMPLES = r"""
- name: Read the organization's settings
  planetscale.cloud.organization_info:
    organization: acme
  register: org

- name: Show where its invoices go
  ansible.builtin.debug:
    msg: "{{ org.organization.billing_email }}"

- name: List every organization the credentials can see
  planetscale.cloud.organization_info:
    organization: acme
    all_organizations: true
"""

RETURN = r"""
organization:
  description: The organization.
  returned: success
  type: dict
  contains:
    id:
      description: The ID of the organization.
      type: str
    name:
      description: The name of the organization.
      type: str
    billing_email:
      description: Where its invoices go.
      type: str
    idp_managed_roles:
      description: Whether the identity provider manages the roles of its members.
      type: bool
    invoice_budget_amount:
      description: Its expected monthly spend (a string, as the API writes it).
      type: str
    plan:
      description: Its billing plan.
      type: str
    sso:
      description: Whether single sign-on is on.
      type: bool
    database_count:
      description: How many databases it has.
      type: int
    created_at:
      description: When it was created (ISO 8601).
      type: str
organizations:
  description: Every organization the credentials can see, each as RV(organization).
  returned: O(all_organizations=true)
  type: list
  elements: dict
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION


class OrganizationInfo(InfoModule):
    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    must_exist = ()  # a 404 names the organization alone
    argument_spec = dict(
        all_organizations=dict(type="bool", default=False),
    )

    def run(self):
        result = dict(organization=self.client.get(self.org_path()))
        if self.params["all_organizations"]:
            result["organizations"] = self.items(self.path("organizations"))
        return result


def main():
    run_module(OrganizationInfo)


if __name__ == "__main__":
    main()
