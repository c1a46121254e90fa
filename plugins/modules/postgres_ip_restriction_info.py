#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: postgres_ip_restriction_info
short_description: List the IP restrictions of a PostgreSQL database, or read one
version_added: 0.3.0
description:
  - Returns every IP restriction of a PostgreSQL database, walking all pages of the list, or the one named by O(id),
    or those of a O(role) or O(schema).
  - A restriction that does not exist is not an error; RV(ip_restrictions) is then empty. A database or organization
    that does not exist is an error, and so is a MySQL database, which has no IP restrictions.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the PostgreSQL database.
    type: str
    required: true
  id:
    description: The ID of one restriction to read. RV(ip_restrictions) then holds that restriction, or nothing.
    type: str
  role:
    description: Return only the restrictions of this role; V("") those that apply to every role.
    type: str
  schema:
    description: Return only the restrictions of this schema; V("") those that apply to every schema.
    type: str
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.postgres_ip_restriction
"""

EXAMPLES = r"""
- name: List the IP restrictions of a PostgreSQL database
  planetscale.cloud.postgres_ip_restriction_info:
    organization: acme
    database: pgapp
  register: restrictions

- name: Show the networks each role may log in from
  ansible.builtin.debug:
    msg: "{{ restrictions.ip_restrictions | items2dict(key_name='role', value_name='cidrs') }}"

- name: Read the restriction that applies to every role and schema
  planetscale.cloud.postgres_ip_restriction_info:
    organization: acme
    database: pgapp
    role: ""
    schema: ""
  register: everyone
"""

RETURN = r"""
ip_restrictions:
  description: The IP restrictions, as the API lists them. With O(id), a list of the one restriction, or an empty list.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the restriction.
      type: str
    role:
      description: The role it applies to; V("") for every role.
      type: str
    schema:
      description: The schema it applies to; V("") for every schema.
      type: str
    cidrs:
      description: The IPv4 networks it admits.
      type: list
      elements: str
      sample: [203.0.113.0/24]
    description:
      description: What it is for, or null.
      type: str
    actor:
      description: Who made it (C(id), C(display_name), C(avatar_url)).
      type: dict
    created_at:
      description: When it was created.
      type: str
    updated_at:
      description: When it last changed.
      type: str
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.databases import refuse_mysql_restrictions
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION


class PostgresIpRestrictionInfo(InfoModule):
    """A restriction named by id that is absent is an empty list; its database being absent, or MySQL's, a failure."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        id=dict(type="str"),
        role=dict(type="str"),
        schema=dict(type="str"),
    )
    path_options = ("database", "id")
    must_exist = ("database",)

    def run(self):
        try:
            found = self.restrictions()
        except ApiError as error:
            refuse_mysql_restrictions(self, error)
            raise
        return dict(ip_restrictions=[entry for entry in found if all(
            self.params[name] in (None, entry.get(name) or "") for name in ("role", "schema"))])

    def restrictions(self):
        cidrs = self.org_path("databases", self.params["database"], "cidrs")
        if self.params["id"] is None:
            return self.items(cidrs)
        found = self.client.get("%s/%s" % (cidrs, self.params["id"]), missing_ok=True)
        if found is None:
            self.client.get(cidrs, params=dict(per_page=1))  # a missing database or organization fails
            return []
        return [found]


def main():
    run_module(PostgresIpRestrictionInfo)


if __name__ == "__main__":
    main()
