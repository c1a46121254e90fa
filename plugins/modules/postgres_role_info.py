#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: postgres_role_info
short_description: List the roles of a PostgreSQL branch, without their secrets
version_added: 0.2.0
description:
  - Returns every role (connection credential) of a branch of a PostgreSQL database, walking all pages of the list,
    and the branch's default role, for an audit of who can connect and until when.
  - Never returns the secret of a role. The API shows it only to the task that creates, renews or resets the role
    (see M(planetscale.cloud.postgres_role)); should it ever appear in a list, this module drops it.
  - A MySQL branch has passwords, not roles (see M(planetscale.cloud.password_info)); the module fails with a sentence
    that says so.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description:
      - The name of the PostgreSQL database.
    type: str
    required: true
  branch:
    description:
      - The name of the branch.
    type: str
    required: true
  name:
    description:
      - Return only the roles with exactly this name (RV(default_role) is returned whatever its name).
      - Names are not unique on a branch, so several roles may be returned.
    type: str
  limit:
    description:
      - Return at most this many roles (those named O(name), when it is given). By default every role is returned.
    type: int
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.postgres_role
  - module: planetscale.cloud.password_info
"""

EXAMPLES = r"""
- name: List every role of the main branch
  planetscale.cloud.postgres_role_info:
    organization: acme
    database: pgapp
    branch: main
  register: result

- name: Show the expired roles that still exist
  ansible.builtin.debug:
    msg: "{{ result.roles | selectattr('expired') | map(attribute='name') | list }}"

- name: Show the user name of the default role
  ansible.builtin.debug:
    msg: "{{ result.default_role.username }}"
"""

RETURN = r"""
roles:
  description:
    - The roles, in the order the API lists them, the default role among them when the API lists it. Never with the
      secret (C(password)).
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the role.
      type: str
    name:
      description: The name of the role.
      type: str
    username:
      description: The user name to connect with.
      type: str
    access_host_url:
      description: The host to connect to.
      type: str
    database_name:
      description: The PostgreSQL database to connect to.
      type: str
    inherited_roles:
      description: The platform's roles it inherits.
      type: list
      elements: str
    ttl:
      description: Seconds it is valid for after creation or renewal (0 when it never expires).
      type: int
    expires_at:
      description: When it expires (ISO 8601), or null if it never does.
      type: str
    expired:
      description: Whether it has expired.
      type: bool
    default:
      description: Whether it is the branch's default role.
      type: bool
    actor:
      description: Who created the role (id, display_name, avatar_url).
      type: dict
    branch:
      description: The branch of the role (id, name, created_at, updated_at, deleted_at).
      type: dict
default_role:
  description: The branch's default role (C(default) true), without its secret.
  returned: success
  type: dict
"""

from itertools import islice

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule, ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.postgres_roles import not_postgres
from ansible_collections.planetscale.cloud.plugins.module_utils.shown_once import without_secrets


def roles_path(module):
    return module.org_path("databases", module.params["database"], "branches", module.params["branch"], "roles")


class PostgresRoleInfo(InfoModule):
    """The API's search (q) narrows the request; only exact name matches are kept. No secret is ever returned."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        branch=dict(type="str", required=True),
        name=dict(type="str"),
        limit=dict(type="int"),
    )
    path_options = ("database", "branch")
    must_exist = ("database", "branch")

    def validate(self):
        super().validate()
        if self.params["name"] is not None and not self.params["name"].strip():
            raise ModuleFailure("name must not be empty; leave it out to list every role.")

    def run(self):
        url, name = roles_path(self), self.params["name"]
        try:
            listed = self.client.paginate(url, params=None if name is None else dict(q=name))
            matching = (role for role in listed if name is None or role.get("name") == name)
            roles = [without_secrets(role) for role in islice(matching, self.params["limit"])]
            default = without_secrets(self.client.get(url + "/default"))
        except ApiError as error:
            not_postgres(self, error)
            raise
        return dict(roles=roles, default_role=default)


def main():
    run_module(PostgresRoleInfo)


if __name__ == "__main__":
    main()
