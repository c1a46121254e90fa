#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: read_only_region_info
short_description: List the read-only regions of a database
version_added: 0.3.0
description:
  - Returns the read-only regions of a database (of its default branch), walking all pages of the list. A read-only
    region is a region where the platform keeps replicas that serve reads close to their clients.
  - A database without read-only regions is not an error; RV(read_only_regions) is then empty. A database or
    organization that does not exist is an error.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the database.
    type: str
    required: true
  region:
    description:
      - Return only the read-only region in this region, named by its slug (such as V(eu-west)).
    type: str
  ready:
    description:
      - Return only the read-only regions ready to serve queries (V(true)), or only those not ready yet (V(false)).
        By default both are returned.
    type: bool
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.region_info
"""

EXAMPLES = r"""
- name: List the read-only regions of a database
  planetscale.cloud.read_only_region_info:
    organization: acme
    database: app
  register: replicas

- name: Show the slugs of the regions that serve reads
  ansible.builtin.debug:
    msg: "{{ replicas.read_only_regions | selectattr('ready') | map(attribute='region.slug') | list }}"

- name: List the read-only regions still being made ready
  planetscale.cloud.read_only_region_info:
    organization: acme
    database: app
    ready: false
"""

RETURN = r"""
read_only_regions:
  description: The read-only regions the filters select, in the order the API lists them.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the read-only region.
      type: str
    display_name:
      description: Its name.
      type: str
    ready:
      description: Whether it is ready to serve queries.
      type: bool
    ready_at:
      description: When it became ready, or null.
      type: str
    region:
      description:
        - The region, as RV(planetscale.cloud.region_info#module:regions) returns regions (C(slug), C(display_name),
          C(provider), C(location), C(enabled), C(public_ip_addresses), C(current_default) and more).
      type: dict
    created_at:
      description: When it was created.
      type: str
    updated_at:
      description: When it was last updated.
      type: str
    actor:
      description: Who created it.
      type: dict
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION


class ReadOnlyRegionInfo(InfoModule):
    """A page-based list of the database's default branch's read-only regions; the filters apply here."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        region=dict(type="str"),
        ready=dict(type="bool"),
    )
    path_options = ("database", "region")  # region is compared, not sent; held to the rule of names all the same
    must_exist = ("database",)

    def run(self):
        found = self.items(self.org_path("databases", self.params["database"], "read-only-regions"))
        if self.params["region"] is not None:
            found = [entry for entry in found if isinstance(entry.get("region"), dict)
                     and entry["region"].get("slug") == self.params["region"]]
        if self.params["ready"] is not None:
            found = [entry for entry in found if bool(entry.get("ready")) == self.params["ready"]]
        return dict(read_only_regions=found)


def main():
    run_module(ReadOnlyRegionInfo)


if __name__ == "__main__":
    main()
