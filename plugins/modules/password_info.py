#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: password_info
short_description: List the passwords of a branch, without their secrets
version_added: 0.1.0
description:
  - Returns every password (connection credential) of a database branch, walking all pages of the list,
    for an audit of who can connect, from where and until when.
  - Never returns the secret of a password. The API shows it only once, when the password is created
    (see M(planetscale.cloud.password)); should it ever appear in a list, this module drops it.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description:
      - The name of the database.
    type: str
    required: true
  branch:
    description:
      - The name of the branch.
    type: str
    required: true
  name:
    description:
      - Return only the passwords with exactly this name.
      - Names are not unique on a branch, so several passwords may be returned.
    type: str
  limit:
    description:
      - Return at most this many passwords (those named O(name), when it is given). By default every password is returned.
    type: int
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.info
seealso:
  - module: planetscale.cloud.password
  - module: planetscale.cloud.postgres_role_info
"""

EXAMPLES = r"""
- name: List every password of the main branch
  planetscale.cloud.password_info:
    organization: acme
    database: app
    branch: main
  register: result

- name: Show the expired passwords that still exist
  ansible.builtin.debug:
    msg: "{{ result.passwords | selectattr('expired') | map(attribute='name') | list }}"

- name: Show the passwords that can connect from anywhere
  ansible.builtin.debug:
    msg: "{{ result.passwords | rejectattr('cidrs') | map(attribute='name') | list }}"

- name: Find the passwords named app-server
  planetscale.cloud.password_info:
    organization: acme
    database: app
    branch: main
    name: app-server
  register: app_server
"""

RETURN = r"""
passwords:
  description:
    - The passwords, in the order the API lists them. Never with the secret (C(plain_text)).
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The ID of the password.
      type: str
    name:
      description: The display name of the password.
      type: str
      sample: app-server
    role:
      description: What the password may do.
      type: str
      sample: reader
    cidrs:
      description: The IP addresses or CIDR ranges allowed to use the password; null or empty allows any.
      type: list
      elements: str
      sample: ["203.0.113.0/24"]
    username:
      description: The user name to connect with.
      type: str
    access_host_url:
      description: The host to connect to.
      type: str
    created_at:
      description: When the password was created (ISO 8601).
      type: str
    expires_at:
      description: When the password expires (ISO 8601), or null if it never does.
      type: str
    expired:
      description: Whether the password has expired.
      type: bool
    ttl_seconds:
      description: The lifetime of the password in seconds, or null if it never expires.
      type: int
    last_used_at:
      description: When the password last ran a query (ISO 8601), or null.
      type: str
    renewable:
      description: Whether the password can be renewed.
      type: bool
    replica:
      description: Whether the password is for a read replica.
      type: bool
    actor:
      description: Who created the password (id, display_name, avatar_url).
      type: dict
    region:
      description: The region of the password.
      type: dict
    database_branch:
      description: The branch of the password (name, id, production, mysql_edge_address).
      type: dict
"""

from itertools import islice

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import InfoModule, ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.shown_once import without_secrets


class PasswordInfo(InfoModule):
    """The API's name search (q) narrows the request; only exact matches are kept. No secret is ever returned."""

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
            raise ModuleFailure("name must not be empty; leave it out to list every password.")

    def run(self):
        url = self.org_path("databases", self.params["database"], "branches", self.params["branch"], "passwords")
        name = self.params["name"]
        listed = self.client.paginate(url, params=None if name is None else dict(q=name))
        matching = (password for password in listed if name is None or password.get("name") == name)
        return dict(passwords=[without_secrets(password) for password in islice(matching, self.params["limit"])])


def main():
    run_module(PasswordInfo)


if __name__ == "__main__":
    main()
