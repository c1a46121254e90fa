#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: password
short_description: Manage the passwords (connection credentials) of a database branch
version_added: 0.1.0
description:
  - Ensures that a password with a name exists on a branch, its O(cidrs) kept up to date in place, or that it does not.
  - The secret is shown once, by the task that creates, renews or replaces the password, in RV(password.plain_text)
    and RV(connection). Set C(no_log) on that task and store the secret at once.
  - O(role), O(replica) and O(ttl) can only be set when the password is created; a difference fails and names the
    field, unless O(replace=true).
  - Several passwords on a branch may share a name; then the module fails and names their IDs, also in a warning that
    C(no_log) does not hide, and O(id) selects one.
  - When runs create the same password at once, the oldest stays and the others return it unchanged, without a secret.
    After a lost create answer, a password with every field sent that appeared in the time of the request is never
    deleted, because whose it is cannot be told (another run may share the credential); the task returns it without its
    secret, and a warning that C(no_log) does not hide names its ID and says how to get a secret you hold. The create
    is sent again only when none appeared. The idempotency guide tells the rules.
  - A create answer without the C(username) or host is completed by reading the password back once.
  - An existing password that has expired is left as it is, with a warning that suggests O(renew=true).
  - In check mode, a branch that does not exist yet (because the check run skipped the task that creates it) gives a
    predicted create and a warning, rather than a failure.
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
  name:
    description: The name of the password. With O(id), the name the password is given.
    type: str
    required: true
  id:
    description: The ID of the password, to select one of several passwords that share a name.
    type: str
  state:
    description:
      - V(present) creates the password if there is none with this name, and updates its name and O(cidrs).
      - V(absent) deletes it; a password that does not exist is not a change.
    type: str
    choices: [present, absent]
    default: present
  role:
    description: The database role. When a password is created without it, the platform's default applies.
    type: str
    choices: [reader, writer, admin, readwriter]
  replica:
    description: Whether the password is for a read replica.
    type: bool
  ttl:
    description:
      - Seconds the password is valid for after it is created or renewed, at most 2147483647 (about 68 years).
      - V(0) means it never expires.
    type: int
  cidrs:
    description:
      - The IP addresses or CIDR ranges allowed to use it, in any order. An empty list allows every address.
      - A range with host bits set (V(10.9.8.7/0), which would mean every address) fails the task before anything is
        sent, naming the network it would mean and the address alone (V(10.9.8.7/32)).
    type: list
    elements: str
  replace:
    description:
      - When O(role), O(replica) or O(ttl) differ, delete the password and create it again with the options given.
      - The new password has a new secret; the old secret stops working.
    type: bool
    default: false
  renew:
    description:
      - Renew the password, which gives it a new secret and a new expiry; only a password with a ttl can be renewed.
      - This is a change every time the task runs.
    type: bool
    default: false
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.resource
seealso:
  - module: planetscale.cloud.password_info
  - module: planetscale.cloud.postgres_role
"""

EXAMPLES = r"""
- name: Ensure the application's password, allowed from the office only
  planetscale.cloud.password:
    organization: acme
    database: app
    branch: main
    name: app
    role: readwriter
    cidrs:
      - 203.0.113.0/24
  register: app_password
  no_log: true

- name: Store the connection URL the first time (the secret is shown once)
  ansible.builtin.copy:
    content: "{{ app_password.connection | planetscale.cloud.connection_url }}"
    dest: "{{ playbook_dir }}/database-url"
    mode: "0600"
  when: app_password.connection is defined
  no_log: true
"""

RETURN = r"""
password:
  description: The password. In check mode, when it would be created, the fields known before creating it.
  returned: O(state=present)
  type: dict
  contains:
    id:
      description: The ID of the password.
      type: str
    name:
      description: The name of the password.
      type: str
    role:
      description: The database role.
      type: str
      sample: readwriter
    cidrs:
      description: The addresses or ranges allowed to use it (null when every address is).
      type: list
      elements: str
    ttl_seconds:
      description: Seconds it is valid for after creation or renewal (null when it never expires).
      type: int
    expires_at:
      description: When it expires (ISO 8601); see also C(expired) and C(renewable).
      type: str
    plain_text:
      description: The secret.
      returned: when the password was created, renewed or replaced (not in check mode)
      type: str
connection:
  description: Ready-to-use connection details, with the secret (the input of the connection_url filter).
  returned: when the password was created, renewed or replaced (not in check mode)
  type: dict
  contains:
    kind:
      description: Always V(mysql).
      type: str
    host:
      description: The host to connect to (without a port).
      type: str
    port:
      description: The port, 3306 unless the platform's address names another.
      type: int
    username:
      description: The user name.
      type: str
    password:
      description: The secret.
      type: str
    database:
      description: The name of the database.
      type: str
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.passwords import OwnPasswords, check_ttl, split_address
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import Resource, capital, networks
from ansible_collections.planetscale.cloud.plugins.module_utils.shown_once import without_secrets

MYSQL_PORT = 3306


def connection(password, database):
    """The connection details of a password that carries its secret (what the connection_url filter takes)."""
    host, port = split_address(password.get("access_host_url"), MYSQL_PORT)
    return dict(kind="mysql", host=host, port=port, username=password.get("username"),
                password=password["plain_text"], database=database)


class Password(OwnPasswords, Resource):
    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        branch=dict(type="str", required=True),
        name=dict(type="str", required=True),
        id=dict(type="str"),
        role=dict(type="str", choices=["reader", "writer", "admin", "readwriter"]),
        replica=dict(type="bool"),
        ttl=dict(type="int"),
        cidrs=dict(type="list", elements="str"),
        replace=dict(type="bool", default=False),
        renew=dict(type="bool", default=False),
    )
    path_options = ("database", "branch", "id")
    kind = "password"
    api_path = ("databases", "{database}", "branches", "{branch}", "passwords")
    names = ("name",)
    parent = "branch"
    fields = ("name", "role", "replica", "ttl", "cidrs")
    create_only = ("role", "replica", "ttl")
    create_defaults = dict(replica=False, ttl=0, cidrs=[])  # the platform's default role is not known here

    def validate(self):
        super().validate()
        check_ttl(self.params["ttl"])
        networks(self.params["cidrs"], strict=True)

    def label(self):
        return "password %r on branch %r of database %r" % (
            self.params["name"], self.params["branch"], self.params["database"])

    def read(self):
        if self.params["id"]:
            return without_secrets(self.client.get(self.url(self.params["id"]), missing_ok=True))
        return self.only_named()

    def managed(self, resource):
        return dict(name=resource.get("name"), role=resource.get("role"), replica=resource.get("replica"),
                    ttl=resource.get("ttl_seconds") or 0, cidrs=resource.get("cidrs") or [])

    def same(self, name, have, want):
        normal = dict(cidrs=networks, replica=bool).get(name)  # the order of cidrs and null for false do not count
        return normal(have) == normal(want) if normal else super().same(name, have, want)

    def predict(self, resource, changes):
        password = dict(resource or dict(replica=False, ttl_seconds=0), **changes)
        return dict(password, ttl_seconds=password.pop("ttl")) if "ttl" in password else password

    def update(self, resource, changes):
        return without_secrets(super().update(resource, changes))  # a rename or a new cidrs list issues no secret

    def remedy_for(self, record):
        if record.get("renewable") or record.get("ttl_seconds"):
            return self.remedy
        return "delete it (state=absent with its id) and run the task again"  # only one with a ttl can be renewed

    def after_present(self, resource, changed):
        if self.superseded:  # as if this task had found the password another run made (after any delete of its own)
            self.created, changed = False, self.replacing
        if resource.get("expired") and not self.params["renew"] and not self.created:
            self.ctx.warn("%s expired at %s: its secret no longer connects. Set renew: true to give it a new secret "
                          "and expiry." % (capital(self.label()), resource.get("expires_at") or "an unknown time"))
        if not self.params["renew"] or self.created:
            return resource, changed
        if not resource.get("renewable"):
            raise ModuleFailure("%s cannot be renewed: only a password with a ttl can." % capital(self.label()))
        return (resource if self.ctx.check_mode else self.renewed(resource)), True

    def result_keys(self, resource):
        if not resource.get("plain_text"):
            return dict(password=resource)
        return dict(password=resource, connection=connection(resource, self.params["database"]))


def main():
    run_module(Password)


if __name__ == "__main__":
    main()
