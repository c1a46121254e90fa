#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: postgres_extension_info
short_description: List the extensions a PostgreSQL branch can use
version_added: 0.3.0
description:
  - Returns the PostgreSQL extensions of a branch as the platform lists them, each with whether the branch can use it
    (and why not), how it is loaded, and the parameters that configure it.
  - The filters select among every extension of the branch; without them every extension is returned.
  - A branch that is not a PostgreSQL branch (a MySQL branch) has no extensions; asking for them fails with a
    sentence that says so. A branch, database or organization that does not exist is an error.
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
    description:
      - Return only the extensions of these names, such as V(pg_stat_statements).
    type: list
    elements: str
  available:
    description:
      - Return only the extensions the branch can use (V(true)), or only those it cannot (V(false)). By default both
        are returned.
    type: bool
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.postgres_parameter_info
"""

EXAMPLES = r"""
- name: List the extensions a PostgreSQL branch can use
  planetscale.cloud.postgres_extension_info:
    organization: acme
    database: pgapp
    branch: main
    available: true
  register: usable

- name: Show their names and how each is loaded
  ansible.builtin.debug:
    msg: "{{ usable.extensions | items2dict(key_name='name', value_name='loader') }}"

- name: Stop when pg_stat_statements cannot be used
  planetscale.cloud.postgres_extension_info:
    organization: acme
    database: pgapp
    branch: main
    name: pg_stat_statements
  register: statements
  failed_when: statements.extensions | rejectattr('available') | list | length > 0
"""

RETURN = r"""
extensions:
  description: The extensions the filters select, in the order the API lists them.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the extension.
      type: str
    name:
      description: The name of the extension, as C(CREATE EXTENSION) takes it.
      type: str
      sample: pg_stat_statements
    description:
      description: What the extension does.
      type: str
    available:
      description: Whether the branch can use the extension.
      type: bool
    unavailable_reason:
      description: Why the branch cannot use it, when it cannot.
      type: str
    loader:
      description: >-
        How the extension is loaded: V(shared_preload_libraries) or V(session_preload_libraries) (a parameter
        change), or V(create_extension) (C(CREATE EXTENSION) in the database).
      type: str
      sample: shared_preload_libraries
    internal:
      description: Whether the platform itself uses the extension.
      type: bool
    url:
      description: The documentation of the extension.
      type: str
    parameters:
      description:
        - The parameters that configure the extension, records as
          RV(planetscale.cloud.postgres_parameter_info#module:parameters) returns them.
      type: list
      elements: dict
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.capacity import (
    blank_names, postgres_catalogue, selected)
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION


class PostgresExtensionInfo(InfoModule):
    """The platform answers a bare JSON array of every extension; the filters apply here."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        branch=dict(type="str", required=True),
        name=dict(type="list", elements="str"),
        available=dict(type="bool"),
    )
    path_options = ("database", "branch")
    must_exist = ("database", "branch")

    def validate(self):
        super().validate()
        blank_names("name", self.params["name"])

    def run(self):
        found = selected(postgres_catalogue(self, "extensions", "extensions"), self.params["name"])
        if self.params["available"] is not None:
            found = [extension for extension in found
                     if bool(extension.get("available")) == self.params["available"]]
        return dict(extensions=found)


def main():
    run_module(PostgresExtensionInfo)


if __name__ == "__main__":
    main()
