#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: cluster_size_info
short_description: List the cluster sizes of an organization
version_added: 0.2.0
description:
  - Returns the cluster sizes the organization knows for an engine, the valid values of
    O(planetscale.cloud.database#module:cluster_size) and O(planetscale.cloud.branch#module:cluster_size), so that a
    playbook can check a size before it creates a database or resizes a branch.
  - The names depend on the engine, for example V(PS_DEV), V(PS_10) and V(M7_160_D_METAL_460) for MySQL,
    V(PS_DEV_AWS_X86), V(PS_10_AWS_ARM) and V(M1_10_AWS_AMD_D_METAL_10) for PostgreSQL; they are returned as the
    platform lists them.
  - Sizes the organization may not use are listed with RV(cluster_sizes[].enabled=false).
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  engine:
    description:
      - The engine whose sizes to list.
      - By default the engine of O(database) when it is given (its record's C(kind), else that of its default
        branch), else V(mysql), the API's default.
    type: str
    choices: [mysql, postgresql]
  rates:
    description:
      - Include the prices (RV(cluster_sizes[].rate) and the other rates); without it they are null.
    type: bool
    default: false
  region:
    description:
      - The slug of the region whose prices to give; by default the organization's default region.
    type: str
  database:
    description:
      - The database whose own prices, where it has any, take precedence over the organization's.
      - Without O(engine), the sizes listed are those of its engine; a database that does not exist fails the task.
    type: str
  enabled:
    description:
      - Return only the sizes the organization may use (V(true)) or only those it may not (V(false)).
      - By default every size is returned.
    type: bool
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.database
"""

EXAMPLES = r"""
- name: List the MySQL cluster sizes the organization may use
  planetscale.cloud.cluster_size_info:
    organization: acme
    enabled: true
  register: sizes

- name: Stop before creating a database of a size the organization does not have
  ansible.builtin.assert:
    that: db_size in sizes.cluster_sizes | map(attribute='name')
    fail_msg: "{{ db_size }} is not one of {{ sizes.cluster_sizes | map(attribute='name') | join(', ') }}."
  vars:
    db_size: PS_20

- name: List the sizes a database may be resized to, for its engine (PostgreSQL here)
  planetscale.cloud.cluster_size_info:
    organization: acme
    database: pgapp
    enabled: true

- name: List the PostgreSQL sizes with their prices in a region
  planetscale.cloud.cluster_size_info:
    organization: acme
    engine: postgresql
    rates: true
    region: eu-west
"""

RETURN = r"""
cluster_sizes:
  description: The cluster sizes, in the order the API gives them.
  returned: success
  type: list
  elements: dict
  contains:
    name:
      description: The name to give as O(planetscale.cloud.database#module:cluster_size) or
        O(planetscale.cloud.branch#module:cluster_size).
      type: str
      sample: PS_10_AWS_ARM
    display_name:
      description: The name the web application shows.
      type: str
      sample: PS-10
    enabled:
      description: Whether the organization may use the size.
      type: bool
    cpu:
      description: The CPUs, such as V(1/8).
      type: str
    ram:
      description: The memory in bytes.
      type: int
    storage:
      description: The storage in bytes, or null where it grows on demand.
      type: int
    metal:
      description: Whether it is a Metal size.
      type: bool
    development:
      description: Whether development branches can have the size.
      type: bool
    production:
      description: Whether production branches can have the size.
      type: bool
    rate:
      description: The price of the size; null without O(rates).
      type: float
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.client import json_kind
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION


class ClusterSizeInfo(InfoModule):
    """The API answers a JSON array (not a page); a bare {"data": [...]} is taken too."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        engine=dict(type="str", choices=["mysql", "postgresql"]),
        rates=dict(type="bool", default=False),
        region=dict(type="str"),
        database=dict(type="str"),
        enabled=dict(type="bool"),
    )
    path_options = ("region", "database")  # query values, held to the same rule as names

    def run(self):
        query = dict((name, self.params[name]) for name in ("engine", "region", "database") if self.params[name])
        if self.params["database"] and not self.params["engine"]:
            query["engine"] = self.engine_of(self.params["database"])
            query = dict((name, value) for name, value in query.items() if value)
        if self.params["rates"]:
            query["rates"] = "true"
        answer = self.client.request("GET", self.org_path("cluster-size-skus"), params=query or None, any_json=True)
        sizes = answer.get("data") if isinstance(answer, dict) else answer
        if not isinstance(sizes, list) or not all(isinstance(size, dict) for size in sizes):
            found = "a list of other things than objects" if isinstance(sizes, list) else json_kind(answer)
            raise self.client.wrong_answer("the answer is %s where a list of cluster sizes was expected" % found)
        if self.params["enabled"] is not None:
            sizes = [size for size in sizes if bool(size.get("enabled", True)) == self.params["enabled"]]
        return dict(cluster_sizes=sizes)

    def engine_of(self, database):
        """The engine of a database: its record's kind, else (a record that does not state it, as the platform's
        recorded databases may not) that of its default branch; None when neither says."""
        record = self.client.get(self.org_path("databases", database))
        kind = record.get("kind") if isinstance(record, dict) else None
        if not kind and isinstance(record, dict) and record.get("default_branch"):
            branch = self.client.get(self.org_path("databases", database, "branches", record["default_branch"]),
                                     missing_ok=True)
            kind = branch.get("kind") if isinstance(branch, dict) else None
        return kind if kind in ("mysql", "postgresql") else None


def main():
    run_module(ClusterSizeInfo)


if __name__ == "__main__":
    main()
