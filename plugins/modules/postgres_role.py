#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: postgres_role
short_description: Manage the roles (connection credentials) of a PostgreSQL branch
version_added: 0.2.0
description:
  - Ensures that a role with a name exists on a branch of a PostgreSQL database, or that it does not. Roles are the
    credentials of PostgreSQL branches; a MySQL branch has passwords (M(planetscale.cloud.password)), and this module
    fails with a sentence that says so.
  - The secret is shown once, by the task that creates, renews or resets the role, in RV(role.password) and
    RV(connection). Set C(no_log) on that task and store the secret at once; the
    C(planetscale.cloud.connection_url) filter turns the result into a C(postgresql://) URL.
  - O(inherited_roles) and O(ttl) can only be set when the role is created; a difference fails and names the field.
    Only the name can be changed in place (with O(id)).
  - Several roles on a branch may share a name; then the module fails and names their IDs, also in a warning that
    C(no_log) does not hide, and O(id) selects one.
  - After a create whose answer was lost, a role with every field sent that appeared in the time of the request is
    never deleted. The lost create may have made it, whose secret nobody holds, or another run or client did, possibly
    with the same credential, and nothing the platform returns tells them apart. The task returns it without its
    secret, and a warning that C(no_log) does not hide names its ID. If nobody holds its secret, O(reset=true) gives it
    one. The create is sent again only when no such role appeared. A create answer without the C(username) or host is
    completed by reading the role back once.
    A create answered with a role of another name fails, and nothing more is sent. The idempotency guide of the
    collection tells the rules, which are those of M(planetscale.cloud.password).
  - An existing role that has expired is left as it is, with a warning that suggests O(renew=true).
  - The branch's default role (named C(postgres)) can be reset (O(reset=true)) but not renamed or deleted.
  - In check mode, a branch that does not exist yet (because the check run skipped the task that creates it) gives a
    predicted create and a warning, rather than a failure.
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
    description: The name of the role. With O(id), the name the role is given.
    type: str
    required: true
  id:
    description: The ID of the role, to select one of several roles that share a name.
    type: str
  state:
    description:
      - V(present) creates the role if there is none with this name, and renames it (with O(id)).
      - V(absent) deletes it; a role that does not exist is not a change.
    type: str
    choices: [present, absent]
    default: present
  inherited_roles:
    description:
      - The platform's roles this role inherits, in any order, for example V(pg_read_all_data) and
        V(pg_write_all_data). Only when the role is created.
    type: list
    elements: str
    choices: [pg_checkpoint, pg_create_subscription, pg_maintain, pg_monitor, pg_read_all_data, pg_read_all_settings,
              pg_read_all_stats, pg_signal_backend, pg_stat_scan_tables, pg_use_reserved_connections,
              pg_write_all_data, postgres]
  ttl:
    description:
      - Seconds the role is valid for after it is created or renewed, at most 2147483647. V(0) means it never expires.
        Only when the role is created.
    type: int
  renew:
    description:
      - Renew the role, which gives it a new expiry (O(ttl) seconds from now); only a role with a ttl can be renewed.
        The task returns the secret.
      - This is a change every time the task runs. Not with O(reset).
    type: bool
    default: false
  reset:
    description:
      - Give the role a new secret, which the task returns; the old secret stops working.
      - This is a change every time the task runs. Not with O(renew).
    type: bool
    default: false
  successor:
    description:
      - With O(state=absent), the role that receives the deleted role's objects (tables, sequences...), by its ID or
        its username (with or without the branch suffix). Without it the role's objects are not reassigned.
    type: str
  reassign_objects_to:
    description:
      - With O(state=present), hand every object the role owns (tables, sequences...) to this role, by its ID or its
        username (with or without the branch suffix), and keep the role; for example before the role's holder
        leaves, or to give a migration role's tables to the application's role.
      - The API does not tell what a role owns, so this is a change every time the task runs on a role that exists,
        in check mode too (which sends nothing). A role the task creates owns nothing, and nothing is reassigned.
      - After an answer that was lost, the reassignment is sent again, which hands what the role owns then to the
        same role.
    type: str
    version_added: 0.3.0
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.attributes.resource
seealso:
  - module: planetscale.cloud.postgres_role_info
  - module: planetscale.cloud.password
"""

EXAMPLES = r"""
- name: Ensure the application's role, reading and writing every table
  planetscale.cloud.postgres_role:
    organization: acme
    database: pgapp
    branch: main
    name: app
    inherited_roles: [pg_read_all_data, pg_write_all_data]
  register: app_role
  no_log: true

- name: Store the connection string the first time (the secret is shown once)
  ansible.builtin.copy:
    content: "DATABASE_URL={{ app_role | planetscale.cloud.connection_url }}\n"
    dest: "{{ playbook_dir }}/database.env"
    mode: "0600"
  when: app_role.connection is defined
  no_log: true

- name: Hand the tables of the migrations role to the application's role, and keep it
  planetscale.cloud.postgres_role:
    organization: acme
    database: pgapp
    branch: main
    name: migrations
    reassign_objects_to: "{{ app_role.role.username }}"

- name: Delete a role, handing its tables to the application's role
  planetscale.cloud.postgres_role:
    organization: acme
    database: pgapp
    branch: main
    name: migrations
    state: absent
    successor: "{{ app_role.role.id }}"
"""

RETURN = r"""
role:
  description: The role. In check mode, when it would be created, the fields known before creating it.
  returned: O(state=present)
  type: dict
  contains:
    id:
      description: The ID of the role.
      type: str
    name:
      description: The name of the role.
      type: str
      sample: app
    username:
      description: The user name to connect with (the base username and the branch suffix).
      type: str
    access_host_url:
      description: The host to connect to.
      type: str
    database_name:
      description: The PostgreSQL database to connect to.
      type: str
      sample: postgres
    inherited_roles:
      description: The platform's roles it inherits.
      type: list
      elements: str
    ttl:
      description: Seconds it is valid for after creation or renewal (0 when it never expires).
      type: int
    expires_at:
      description: When it expires (ISO 8601), or null.
      type: str
    expired:
      description: Whether it has expired.
      type: bool
    default:
      description: Whether it is the branch's default role.
      type: bool
    password:
      description: The secret.
      returned: when the role was created, renewed or reset (not in check mode)
      type: str
connection:
  description: Ready-to-use connection details, with the secret (the input of the connection_url filter).
  returned: when the role was created, renewed or reset (not in check mode)
  type: dict
  contains:
    kind:
      description: Always V(postgresql).
      type: str
    host:
      description: The host to connect to.
      type: str
    port:
      description: The port, 5432.
      type: int
    username:
      description: The user name.
      type: str
    password:
      description: The secret.
      type: str
    database:
      description: The PostgreSQL database to connect to.
      type: str
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.options import CONNECTION, CREDENTIALS, ORGANIZATION
from ansible_collections.planetscale.cloud.plugins.module_utils.passwords import OwnPasswords, check_ttl, split_address
from ansible_collections.planetscale.cloud.plugins.module_utils.postgres_roles import not_postgres
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import Resource, capital
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import write_and_settle
from ansible_collections.planetscale.cloud.plugins.module_utils.shown_once import without_secrets

INHERITABLE = ["pg_checkpoint", "pg_create_subscription", "pg_maintain", "pg_monitor", "pg_read_all_data",
               "pg_read_all_settings", "pg_read_all_stats", "pg_signal_backend", "pg_stat_scan_tables",
               "pg_use_reserved_connections", "pg_write_all_data", "postgres"]
PORT = 5432
SECRET = "password"


def connection(role):
    """The connection details of a role that carries its secret (what the connection_url filter takes). The
    platform's access_host_url names no port (5432); where it names one (host:port), that port is the one."""
    host, port = split_address(role.get("access_host_url"), PORT)
    return dict(kind="postgresql", host=host, port=port, username=role.get("username"),
                password=role[SECRET], database=role.get("database_name") or "postgres")


class PostgresRole(OwnPasswords, Resource):
    """The rules of a role resource, before passwords.OwnPasswords and resource.Resource: the default role, successors,
    renew and reset (a renewal or reset whose answer, the only copy of the secret, was lost is sent again), and the
    secret only in the result of the task that issued it.
    """

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION)
    argument_spec = dict(
        database=dict(type="str", required=True),
        branch=dict(type="str", required=True),
        name=dict(type="str", required=True),
        id=dict(type="str"),
        inherited_roles=dict(type="list", elements="str", choices=INHERITABLE),
        ttl=dict(type="int"),
        renew=dict(type="bool", default=False),
        reset=dict(type="bool", default=False),
        successor=dict(type="str"),
        reassign_objects_to=dict(type="str"),
    )
    path_options = ("database", "branch", "id")
    kind = noun = "role"
    api_path = ("databases", "{database}", "branches", "{branch}", "roles")
    names = ("name", "successor", "reassign_objects_to")
    parent = "branch"
    fields = ("name", "inherited_roles", "ttl")
    create_only = ("inherited_roles", "ttl")
    create_defaults = dict(ttl=0, inherited_roles=[])
    remedy = "reset it (reset=true)"  # what gives a secret the task holds, after one was lost (OwnPasswords.explain)

    def label(self):
        return "role %r on branch %r of database %r" % (
            self.params["name"], self.params["branch"], self.params["database"])

    def validate(self):
        super().validate()
        check_ttl(self.params["ttl"])
        if self.params["renew"] and self.params["reset"]:
            raise ModuleFailure("renew and reset cannot both be true: reset gives a new secret, renew a new expiry.")
        if self.params["successor"] is not None and self.params["state"] != "absent":
            raise ModuleFailure("successor is for state=absent only: it names the role that receives the objects of "
                                "the role deleted.")
        if self.params["reassign_objects_to"] is not None and self.params["state"] == "absent":
            raise ModuleFailure("reassign_objects_to is for state=present only: it keeps the role; successor names "
                                "the role that receives the objects of a role deleted.")

    def read(self):
        try:
            if self.params["id"]:
                return without_secrets(self.client.get(self.url(self.params["id"]), missing_ok=True))
            return self.only_named()
        except ApiError as error:
            not_postgres(self, error)
            raise

    def managed(self, resource):
        return dict(name=resource.get("name"), inherited_roles=resource.get("inherited_roles") or [],
                    ttl=resource.get("ttl") or 0)

    def update(self, resource, changes):
        return without_secrets(super().update(resource, changes))  # a rename issues no secret

    def delete(self, resource):
        successor = self.params["successor"]
        self.client.request("DELETE", self.url(resource["id"]), missing_ok=True,
                            params=dict(successor=successor) if successor else None)

    def own_successor(self, resource, option):
        """Refuse an option (successor, reassign_objects_to) that names the role itself."""
        successor = self.params[option]
        if successor and successor in (resource.get("id"), resource.get("username"), resource.get("base_username")):
            raise ModuleFailure("%s cannot be its own successor: name another role of the branch, or leave %s out."
                                % (capital(self.label()), option))

    def present(self, resource):
        if resource is not None:  # before a rename is sent
            self.own_successor(resource, "reassign_objects_to")
        return super().present(resource)

    def guard(self, resource):
        if not resource.get("default"):
            self.own_successor(resource, "successor")
            return
        if self.params["state"] == "absent":
            raise ModuleFailure("%s is the branch's default role, which cannot be deleted; reset=true gives it a new "
                                "secret." % capital(self.label()))
        raise ModuleFailure("%s is the branch's default role, which cannot be renamed." % capital(self.label()))

    def after_present(self, resource, changed):
        resource, changed = self.issued_again(resource, changed)
        if self.params["reassign_objects_to"] and not self.created:
            if not self.ctx.check_mode:
                self.reassign(resource)
            changed = True
        return resource, changed

    def reassign(self, resource):
        """POST .../reassign, answered 204 without a body. REASSIGN OWNED hands over what the role owns when it runs,
        so one sent again after a lost answer changes nothing the first did not ask for: it is sent again."""
        body = dict(successor=self.params["reassign_objects_to"])
        write_and_settle(lambda: self.client.post(self.url(resource["id"], "reassign"), json=body))

    def issued_again(self, resource, changed):
        """A renewal or reset the task asks for (a created role's secret is new already)."""
        if self.superseded:  # as if this task had found the role another run made (after any delete of its own)
            self.created, changed = False, False
        if resource.get("expired") and not self.params["renew"] and not self.created:
            self.ctx.warn("%s expired at %s: its secret no longer connects. Set renew: true to give it a new "
                          "expiry." % (capital(self.label()), resource.get("expires_at") or "an unknown time"))
        if self.created or not (self.params["renew"] or self.params["reset"]):
            return resource, changed
        if self.params["renew"] and not resource.get("ttl"):
            raise ModuleFailure("%s cannot be renewed: it never expires (only a role with a ttl can be renewed); "
                                "reset=true gives it a new secret." % capital(self.label()))
        if self.ctx.check_mode:
            return resource, True
        return (self.renewed(resource) if self.params["renew"] else self.reissued(resource)), True

    def result_keys(self, resource):
        if not resource.get("password"):
            return dict(role=without_secrets(resource))
        return dict(role=resource, connection=connection(resource))

    def reissued(self, resource):
        default = bool(resource.get("default"))
        path = self.url("reset-default") if default else self.url(resource["id"], "reset")
        answer = self.once.resend(lambda: self.client.post(path))
        return dict(resource, **answer) if default else answer


def main():
    run_module(PostgresRole)


if __name__ == "__main__":
    main()
