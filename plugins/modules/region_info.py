#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: region_info
short_description: List the regions of a database, of an organization, or of the platform
version_added: 0.1.0
description:
  - Returns every region (all pages) a database can use, for example to choose
    O(planetscale.cloud.branch#module:region); or the regions of the organization, with the one new databases go to
    by default and the database kinds each supports; or the platform's public regions, which need no organization.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  scope:
    description:
      - Which regions to list.
      - V(database) lists the regions the database O(database) can use. It is the default when O(database) is given.
      - V(organization) lists the regions of the organization. It is the default without O(database).
      - V(public) lists the platform's public regions. It needs no organization (one that O(organization) or
        C(module_defaults) gives is not used) and no credentials. None are sent, since the list is public.
    type: str
    choices: [database, organization, public]
    version_added: 0.3.0
  database:
    description:
      - The name of the database whose regions to list, for O(scope=database).
    type: str
  limit:
    description:
      - Return at most this many regions. By default every region is returned.
    type: int
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
"""

EXAMPLES = r"""
- name: List the regions of a database
  planetscale.cloud.region_info:
    organization: acme
    database: app
  register: result

- name: Show the slugs of the enabled regions
  ansible.builtin.debug:
    msg: "{{ result.regions | selectattr('enabled') | map(attribute='slug') | list }}"

- name: Find the region new databases of the organization go to by default
  planetscale.cloud.region_info:
    organization: acme
  register: organization_regions

- name: Show the default region
  ansible.builtin.debug:
    msg: "{{ organization_regions.regions | selectattr('current_default') | map(attribute='slug') | first }}"

- name: List the platform's public regions, without an organization or credentials
  planetscale.cloud.region_info:
    scope: public
  register: public_regions
"""

RETURN = r"""
regions:
  description: The regions, in the order the API lists them.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the region.
      type: str
    slug:
      description: The slug that names the region in requests.
      type: str
      sample: us-east
    display_name:
      description: A readable name.
      type: str
    provider:
      description: The cloud provider.
      type: str
    location:
      description: Where the region is.
      type: str
    enabled:
      description: Whether the region can be used.
      type: bool
    public_ip_addresses:
      description: The public IP addresses of the region. The platform's answers to O(scope=public) may leave them out.
      type: list
      elements: str
    current_default:
      description: Whether this is the default region for new databases. Not in every answer to O(scope=public).
      type: bool
    mysql_supported:
      description: Whether the region supports MySQL (Vitess) databases.
      returned: O(scope=organization)
      type: bool
    postgresql_supported:
      description: Whether the region supports PostgreSQL databases.
      returned: O(scope=organization)
      type: bool
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule, ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION


class RegionInfo(InfoModule):
    """A database's regions (GET .../databases/{database}/regions), the organization's (GET .../regions), or the
    public ones (GET /regions: no organization, no credentials)."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        scope=dict(type="str", choices=["database", "organization", "public"]),
        database=dict(type="str"),
        limit=dict(type="int"),
    )
    path_options = ("database",)

    def scope(self):
        return self.params["scope"] or ("organization" if self.params["database"] is None else "database")

    def needs_organization(self):
        return self.scope() != "public"

    def authorization(self):
        if self.scope() == "public":  # the list is public: no credential is sent, though one may be given
            return None
        return super().authorization()

    def not_found_hint(self):
        return super().not_found_hint() if self.needs_organization() else None

    def validate(self):
        scope = self.scope()
        if scope == "database" and self.params["database"] is None:
            raise ModuleFailure("scope=database lists the regions of a database: set database to its name, or set "
                                "scope to organization or public.")
        if scope != "database" and self.params["database"] is not None:
            raise ModuleFailure("database is for scope=database only: the %s regions are not a database's; remove "
                                "database, or set scope to database." % (
                                    "organization's" if scope == "organization" else "public"))
        super().validate()

    def run(self):
        scope = self.scope()
        if scope == "public":
            url = self.path("regions")
        elif scope == "organization":
            url = self.org_path("regions")
        else:
            url = self.org_path("databases", self.params["database"], "regions")
        return dict(regions=self.items(url, limit=self.params["limit"]))


def main():
    run_module(RegionInfo)


if __name__ == "__main__":
    main()
