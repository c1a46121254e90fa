#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: branch_schema_info
short_description: Read the schema of a branch and its lint errors
version_added: 0.2.0
description:
  - Returns the tables of a branch's schema, each with its DDL, and every lint error of the schema (every page).
  - A lint error (for example a table without a primary or unique key) blocks deploy requests, and enabling safe
    migrations with M(planetscale.cloud.branch).
  - A branch, database or organization that does not exist is an error.
  - Lint is a MySQL feature of the platform. Where the platform has no lint for the branch (its schema lint answers
    404, as for a PostgreSQL branch), the task still returns the schema, with no lint errors and RV(lint_note) saying
    so.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the database.
    type: str
    required: true
  branch:
    description: The name of the branch.
    type: str
    required: true
  keyspace:
    description:
      - Only the tables of this keyspace, and only the lint errors about it. By default the whole schema.
    type: str
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.branch
  - module: planetscale.cloud.deploy_request
"""

EXAMPLES = r"""
- name: Read the schema of the production branch
  planetscale.cloud.branch_schema_info:
    organization: acme
    database: app
    branch: main
  register: schema

- name: Show the DDL of every table
  ansible.builtin.debug:
    msg: "{{ schema.schema | map(attribute='raw') | list }}"

- name: Stop before turning on safe migrations, which lint errors would block
  ansible.builtin.assert:
    that: schema.lint_errors | length == 0
    fail_msg: >-
      Fix these first: {{ schema.lint_errors | map(attribute='table_name') | join(', ') }}
"""

RETURN = r"""
schema:
  description: The tables of the schema, in the order the API lists them.
  returned: success
  type: list
  elements: dict
  contains:
    name:
      description: The name of the table.
      type: str
      sample: orders
    raw:
      description: The table's DDL (C(CREATE TABLE ...)).
      type: str
    html:
      description: The DDL with syntax highlighting, in HTML.
      type: str
lint_errors:
  description: Every lint error of the schema (of O(keyspace) when given); empty when there is none.
  returned: success
  type: list
  elements: dict
  contains:
    lint_error:
      description: The code of the error.
      type: str
      sample: NO_UNIQUE_KEY
    subject_type:
      description: What the error is about, V(table), V(vschema) or V(routing_rules).
      type: str
    keyspace_name:
      description: The keyspace of the error.
      type: str
    table_name:
      description: The table with the error.
      type: str
    error_description:
      description: What is wrong, in words.
      type: str
    docs_url:
      description: A link to the documentation of the error.
      type: str
lint_note:
  description: Why there are no lint errors to list, when the platform has no lint for the branch.
  returned: the platform has no lint for the branch (its schema lint answered 404)
  type: str
  sample: >-
    The platform has no schema lint for branch 'main' of database 'ledger' (its schema lint answered 404); lint is a
    MySQL feature of the platform.
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule
from ansible_collections.planetscale.cloud.plugins.module_utils.client import path
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.schemas import read_lint


def schema_path(branch_path):
    return branch_path + path("schema")


def read_schema(client, branch_path, keyspace=None):
    """The tables of a branch's schema (name, raw DDL, html); the endpoint answers one list, not pages."""
    answer = client.get(schema_path(branch_path), params=dict(keyspace=keyspace) if keyspace else None)
    tables = answer.get("data")
    if not isinstance(tables, list) or not all(isinstance(table, dict) for table in tables):
        raise client.wrong_answer("the answer has no data list of tables")
    return tables


class BranchSchemaInfo(InfoModule):
    """The schema (one list) and the lint errors (every page) of one branch."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        branch=dict(type="str", required=True),
        keyspace=dict(type="str", no_log=False),  # a keyspace name, not a key
    )
    path_options = ("database", "branch")
    must_exist = ("database", "branch", "keyspace")

    def run(self):
        branch_path = self.org_path("databases", self.params["database"], "branches", self.params["branch"])
        keyspace = self.params["keyspace"]
        result = dict(schema=read_schema(self.client, branch_path, keyspace))
        label = "branch %r of database %r" % (self.params["branch"], self.params["database"])
        result["lint_errors"], note = read_lint(self.client, branch_path, label, keyspace)
        if note:
            result["lint_note"] = note
        return result


def main():
    run_module(BranchSchemaInfo)


if __name__ == "__main__":
    main()
