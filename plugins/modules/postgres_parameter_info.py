#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: postgres_parameter_info
short_description: List the configuration parameters of a PostgreSQL branch
version_added: 0.3.0
description:
  - Returns the parameters of a PostgreSQL branch as the platform lists them, each with its value, its default, its
    type and the range or options it accepts, whether changing it restarts the server and whether it can be changed
    at all.
  - The filters select among every parameter of the branch; without them every parameter is returned.
  - A branch that is not a PostgreSQL branch (a MySQL branch) has no parameters; asking for them fails with a
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
  namespace:
    description:
      - Return only the parameters of this namespace, V(pgconf) (the server's C(postgresql.conf)), V(patroni) or
        V(pgbouncer).
    type: str
    choices: [patroni, pgconf, pgbouncer]
  name:
    description:
      - Return only the parameters of these names, such as V(work_mem).
    type: list
    elements: str
  modified:
    description:
      - Return only the parameters whose value differs from their default (V(true)), or only those at their default
        (V(false)); a parameter without a value counts as at its default. By default both are returned.
    type: bool
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.postgres_extension_info
  - module: planetscale.cloud.branch_change_info
"""

EXAMPLES = r"""
- name: Read two parameters of a PostgreSQL branch
  planetscale.cloud.postgres_parameter_info:
    organization: acme
    database: pgapp
    branch: main
    namespace: pgconf
    name: [work_mem, statement_timeout]
  register: tuning

- name: Show their values
  ansible.builtin.debug:
    msg: "{{ tuning.parameters | items2dict(key_name='name', value_name='value') }}"

- name: List the parameters that differ from the platform's defaults
  planetscale.cloud.postgres_parameter_info:
    organization: acme
    database: pgapp
    branch: main
    modified: true
  register: changed_parameters
"""

RETURN = r"""
parameters:
  description: The parameters the filters select, in the order the API lists them.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the parameter.
      type: str
    namespace:
      description: V(pgconf), V(patroni) or V(pgbouncer).
      type: str
      sample: pgconf
    name:
      description: The name of the parameter.
      type: str
      sample: work_mem
    display_name:
      description: The name the web application shows.
      type: str
    category:
      description: The group of parameters it belongs to.
      type: str
    description:
      description: What the parameter does.
      type: str
    value:
      description: The value the branch has, as a string.
      type: str
      sample: "4096"
    default_value:
      description: The platform's default value, as a string.
      type: str
      sample: "4096"
    parameter_type:
      description: >-
        How the value reads: V(array), V(boolean), V(bytes), V(float), V(integer), V(seconds), V(select), V(string) or
        V(time).
      type: str
      sample: integer
    min:
      description: The smallest value accepted, or null.
      type: float
    max:
      description: The largest value accepted, or null.
      type: float
    options:
      description: The values accepted by a parameter of type V(select).
      type: list
      elements: str
    restart:
      description: Whether a change of the value restarts the server.
      type: bool
    immutable:
      description: Whether the value cannot be changed.
      type: bool
    required:
      description: Whether the parameter is required.
      type: bool
    extension:
      description: Whether the parameter configures an extension.
      type: bool
    url:
      description: The documentation of the parameter.
      type: str
    created_at:
      description: When the parameter was created.
      type: str
    updated_at:
      description: When it was last updated.
      type: str
    actor:
      description: Who last changed it.
      type: dict
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.capacity import (
    blank_names, postgres_catalogue, selected)
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION

# The namespaces of a PostgreSQL parameter: Patroni's, postgresql.conf's and PgBouncer's.
PARAMETER_NAMESPACES = ("patroni", "pgconf", "pgbouncer")


class PostgresParameterInfo(InfoModule):
    """The platform answers a bare JSON array of every parameter; the filters apply here."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        branch=dict(type="str", required=True),
        namespace=dict(type="str", choices=list(PARAMETER_NAMESPACES)),
        name=dict(type="list", elements="str"),
        modified=dict(type="bool"),
    )
    path_options = ("database", "branch")
    must_exist = ("database", "branch")

    def validate(self):
        super().validate()
        blank_names("name", self.params["name"])

    def run(self):
        found = selected(postgres_catalogue(self, "parameters", "parameters"), self.params["name"],
                         namespace=self.params["namespace"])
        if self.params["modified"] is not None:
            found = [parameter for parameter in found if self.params["modified"] == (
                parameter.get("value") is not None and parameter.get("value") != parameter.get("default_value"))]
        return dict(parameters=found)


def main():
    run_module(PostgresParameterInfo)


if __name__ == "__main__":
    main()
