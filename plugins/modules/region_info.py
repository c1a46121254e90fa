#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: region_info
short_description: List the regions available to a database
version_added: 0.1.0
description:
  - Returns every region a database can use (all pages), for example to choose O(planetscale.cloud.branch#module:region).
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description:
      - The name of the database.
    type: str
    required: true
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
      description: The public IP addresses of the region.
      type: list
      elements: str
    current_default:
      description: Whether this is the default region.
      type: bool
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION


class RegionInfo(InfoModule):
    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        limit=dict(type="int"),
    )
    path_options = ("database",)

    def run(self):
        url = self.org_path("databases", self.params["database"], "regions")
        return dict(regions=self.items(url, limit=self.params["limit"]))


def main():
    run_module(RegionInfo)


if __name__ == "__main__":
    main()
