# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roles of PostgreSQL branches (the credentials of a Postgres database).

A role's secret (``password``) is in the answers of its create, renew and reset only; every read
carries an empty string or nothing there. Role names are not unique on a branch, so a role is
found as a password is (passwords.OwnPasswords): by id, or by the one role of a name. What a role shares with
the other kinds whose secret the API shows once (stripping it, renewal and reset) is shown_once's.
"""

from __future__ import annotations

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.passwords import check_ttl, split_address
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import capital
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


def roles_path(module):
    return module.org_path("databases", module.params["database"], "branches", module.params["branch"], "roles")


def not_postgres(module, error):
    """After a 404 or 422 of a roles endpoint: a sentence when the branch exists and is not a PostgreSQL branch
    (a MySQL branch has passwords, not roles); otherwise nothing, and the API's answer stands."""
    if not isinstance(error, ApiError) or error.status not in (404, 422):
        return
    try:
        branch = module.client.get(module.org_path("databases", module.params["database"], "branches",
                                                   module.params["branch"]), missing_ok=True)
    except ApiError:
        return
    kind = branch.get("kind") if isinstance(branch, dict) else None
    if kind and kind != "postgresql":
        raise ModuleFailure("Branch %r of database %r is a %s branch: roles are for PostgreSQL branches; manage its "
                            "credentials with planetscale.cloud.password." % (
                                module.params["branch"], module.params["database"],
                                "MySQL" if kind == "mysql" else kind), status=error.status, error=error.as_dict())


class RoleRules:
    """The rules of a role resource, before passwords.OwnPasswords and resource.Resource: the default role, successors,
    renew and reset (a renewal or reset whose answer, the only copy of the secret, was lost is sent again), and the
    secret only in the result of the task that issued it."""

    remedy = "reset it (reset=true)"  # what gives a secret the task holds, after one was lost (OwnPasswords.explain)

    def validate(self):
        super().validate()
        check_ttl(self.params["ttl"])
        if self.params["renew"] and self.params["reset"]:
            raise ModuleFailure("renew and reset cannot both be true: reset gives a new secret, renew a new expiry.")
        if self.params["successor"] is not None and self.params["state"] != "absent":
            raise ModuleFailure("successor is for state=absent only: it names the role that receives the objects of "
                                "the role deleted.")

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

    def guard(self, resource):
        if not resource.get("default"):
            successor = self.params["successor"]
            if successor and successor in (resource.get("id"), resource.get("username"), resource.get("base_username")):
                raise ModuleFailure("%s cannot be its own successor: name another role of the branch, or leave "
                                    "successor out." % capital(self.label()))
            return
        if self.params["state"] == "absent":
            raise ModuleFailure("%s is the branch's default role, which cannot be deleted; reset=true gives it a new "
                                "secret." % capital(self.label()))
        raise ModuleFailure("%s is the branch's default role, which cannot be renamed." % capital(self.label()))

    def after_present(self, resource, changed):
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
