#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: organization
short_description: Manage the settings of an organization
version_added: 0.3.0
description:
  - Ensures that an organization has the billing email, the identity-provider managed roles setting and the invoice
    budget given. Only the options given are compared, and what differs is sent in one update.
  - An organization is neither created nor deleted here; O(state) is always V(present). An organization that does not
    exist (or that the credentials cannot see) fails the task.
  - The platform lets an OAuth token with the scope C(write_organization) change an organization; other credentials
    may be refused (403).
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  billing_email:
    description:
      - The email address the organization's invoices go to. Spaces around it are removed before it is compared and
        sent.
    type: str
  idp_managed_roles:
    description:
      - Whether the identity provider (single sign-on directory) manages the roles of the organization's members.
    type: bool
  invoice_budget_amount:
    description:
      - The expected monthly spend of the organization, in whole US dollars (0 or more). The API answers it as a
        string; the module compares it exactly as a number, however large.
    type: int
  state:
    description: Always V(present), the organization's settings as given.
    type: str
    choices: [present]
    default: present
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.resource
seealso:
  - module: planetscale.cloud.organization_info
  - module: planetscale.cloud.audit_log_info
"""

EXAMPLES = r"""
- name: Send the invoices to finance and set the monthly budget
  planetscale.cloud.organization:
    organization: acme
    billing_email: finance@acme.test
    invoice_budget_amount: 5000

- name: Let the identity provider manage the members' roles
  planetscale.cloud.organization:
    organization: acme
    idp_managed_roles: true
"""

RETURN = r"""
organization:
  description:
    - The organization (id, name, billing_email, idp_managed_roles, invoice_budget_amount (a string), plan, sso,
      database_count, created_at...). In check mode, with the changes it would get.
  returned: success
  type: dict
  sample:
    name: acme
    billing_email: finance@acme.test
    idp_managed_roles: false
    invoice_budget_amount: "5000"
"""

import decimal

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import Resource


def amount(value):
    """An invoice budget as an exact whole number (through a float, 9007199254740993 would be 9007199254740992): the
    API answers a string ("5000" or "5000.0"); what is not a whole number stays as is, and differs from any."""
    if isinstance(value, str):
        try:
            number = decimal.Decimal(value.strip())
        except decimal.InvalidOperation:
            return value
        if number.is_finite() and number.adjusted() < 100 and number == number.to_integral_value():
            return int(number)  # at most 100 digits: no number of a billion digits from an answer
    return value


class Organization(Resource):
    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    must_exist = ()  # a 404 names the organization alone
    argument_spec = dict(
        billing_email=dict(type="str"),
        idp_managed_roles=dict(type="bool"),
        invoice_budget_amount=dict(type="int"),
        state=dict(type="str", choices=["present"], default="present"),
    )
    kind = "organization"
    fields = ("billing_email", "idp_managed_roles", "invoice_budget_amount")
    names = ("billing_email",)

    def validate(self):
        super().validate()
        email = self.params["billing_email"]
        if email is not None and ("@" not in email or any(char.isspace() for char in email.strip())):
            raise ModuleFailure("billing_email must be an email address, not %r." % email)
        budget = self.params["invoice_budget_amount"]
        if budget is not None and budget < 0:
            raise ModuleFailure("invoice_budget_amount must be 0 or more, not %s." % budget)

    def read(self):
        return self.client.get(self.org_path())  # a missing organization fails: it is never created here

    def update(self, resource, changes):
        return self.client.patch(self.org_path(), json=changes)

    def wanted(self, resource):
        fields = super().wanted(resource)
        if "billing_email" in fields:
            fields["billing_email"] = fields["billing_email"].strip()  # the platform refuses it with spaces around
        return fields

    def managed(self, resource):
        fields = super().managed(resource)
        fields["invoice_budget_amount"] = amount(fields["invoice_budget_amount"])
        return fields

    def predict(self, resource, changes):
        predicted = dict(resource or {}, **changes)
        if "invoice_budget_amount" in changes:
            predicted["invoice_budget_amount"] = str(changes["invoice_budget_amount"])  # as the API writes it
        return predicted

    def label(self):
        return "organization %r" % self.params["organization"]


def main():
    run_module(Organization)


if __name__ == "__main__":
    main()
