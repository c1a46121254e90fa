#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: branch
short_description: Create, wait for and delete database branches
version_added: 0.1.0
description:
  - Ensures that a branch of a database exists, and by default waits until it is ready to serve queries.
  - Ensures that a branch does not exist.
  - O(parent_branch) and O(region) can only be chosen when the branch is created; a difference on an existing
    branch fails and names the field (a field the branch's record does not state is not compared).
  - It serves MySQL and PostgreSQL databases alike. O(backup_id), O(restore_point), O(seed_data), O(major_version) and
    O(cluster_size) only shape a new branch. The first four are never compared with an existing branch (the API does
    not return them); an existing branch of another cluster size is left as it is, with a warning.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the database.
    type: str
    required: true
  name:
    description:
      - The name of the branch.
      - A name the platform accepts for a branch, 1 to 63 lower-case letters, digits, V(-) and V(_), starting with a
        letter or digit; another name (here, in O(parent_branch) or in any module's option that names a branch) is
        refused before any request, also in check mode and with O(state=absent), since no branch has one.
    type: str
    required: true
  state:
    description:
      - V(present) creates the branch if it does not exist.
      - V(absent) deletes the branch; a branch that does not exist is not a change.
      - A production branch is not deleted; the task fails, also in check mode, and says to demote it first.
      - A protected branch (O(deletion_protected)) is not deleted unless the task sets O(deletion_protected=false),
        which lifts the protection first; otherwise the task fails before any write, also in check mode.
    type: str
    choices: [present, absent]
    default: present
  parent_branch:
    description:
      - The branch the new branch is created from. Required to create a branch.
      - It names an existing branch, so the rule for new names does not apply; a branch that does not exist fails
        the task, also in check mode.
    type: str
  region:
    description:
      - The slug of the region to create the branch in. By default the database's default region.
      - See M(planetscale.cloud.region_info) for the regions a database can use.
    type: str
  backup_id:
    description: Restore the schema and data of this backup into the new branch. Requires O(cluster_size).
    type: str
  restore_point:
    description: A point in time (ISO 8601) to restore into the new branch. PostgreSQL only; on MySQL the task fails.
    type: str
  major_version:
    description:
      - The PostgreSQL major version of the new branch, for example V(17); by default its parent's. PostgreSQL
        databases only, like O(restore_point). The platform ignores it for a branch restored from a backup.
    type: str
    version_added: 0.2.0
  seed_data:
    description: Restore the schema and data of the last successful backup into the new branch.
    type: str
    choices: [last_successful_backup]
  cluster_size:
    description:
      - The cluster size of the new branch, of the form V(SIZE_10) (or the platform's spelling V(PS_10)).
      - Required with O(backup_id).
    type: str
  production:
    description:
      - V(true) promotes the branch to production, V(false) demotes it to development; the task waits until the
        branch's record shows it. Promoting waits for the branch to be ready first, whatever O(wait) says.
        The database's default branch is not demoted; the task fails before any write, also in check mode.
    type: bool
  safe_migrations:
    description:
      - Enable (V(true)) or disable safe migrations, which let the schema of a production branch change only through
        deploy requests. Enabling waits for the branch to be ready, and comes after a promotion in the same task.
      - While the branch's schema has lint errors (see M(planetscale.cloud.branch_schema_info)), enabling fails
        before any write, also in check mode, and lists them.
    type: bool
  deletion_protected:
    description:
      - Protect the branch from deletion (V(true)) or lift the protection. See O(state) for V(false) with V(absent).
    type: bool
  wait:
    description: Wait until the branch is ready to serve queries, polling with growing intervals.
  wait_timeout:
    description:
      - Seconds to wait for the branch to be ready, and for a promotion or demotion to be done. The task fails after
        that, with the branch's last state.
    default: 600
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.api.wait
  - planetscale.cloud.attributes.resource
seealso:
  - module: planetscale.cloud.branch_info
  - module: planetscale.cloud.branch_schema_info
"""

EXAMPLES = r"""
- name: Create a preview branch from main and wait until it is ready
  planetscale.cloud.branch:
    organization: acme
    database: app
    name: preview-42
    parent_branch: main
  register: preview

- name: A branch of a PostgreSQL database as it was an hour ago
  planetscale.cloud.branch:
    organization: acme
    database: pgapp
    name: before-migration
    parent_branch: main
    restore_point: "{{ '%Y-%m-%dT%H:%M:%SZ' | strftime(now().timestamp() - 3600, utc=true) }}"

- name: Restore the newest successful backup of main into a new branch
  planetscale.cloud.branch:
    organization: acme
    database: app
    name: restored
    parent_branch: main
    seed_data: last_successful_backup
    wait_timeout: 1800

- name: Promote main to production, protected, with safe migrations
  planetscale.cloud.branch:
    organization: acme
    database: app
    name: main
    production: true
    safe_migrations: true
    deletion_protected: true

- name: Delete the preview branch
  planetscale.cloud.branch:
    organization: acme
    database: app
    name: preview-42
    state: absent
"""

RETURN = r"""
branch:
  description:
    - The branch. In check mode, when it would be created, the fields that are known before creating it.
  returned: O(state=present)
  type: dict
  contains:
    id:
      description: The ID of the branch.
      type: str
    name:
      description: The name of the branch.
      type: str
    parent_branch:
      description: The branch it was created from.
      type: str
    state:
      description: V(pending), V(sleep_in_progress), V(sleeping), V(awakening) or V(ready).
      type: str
    ready:
      description: Whether the branch is ready to serve queries.
      type: bool
    kind:
      description: V(mysql) or V(postgresql), the kind of its database.
      type: str
      version_added: 0.2.0
    region:
      description: The region of the branch (slug, display_name, and so on).
      type: dict
    mysql_edge_address:
      description: The address to connect to.
      type: str
    production:
      description: Whether it is a production branch.
      type: bool
    safe_migrations:
      description: Whether safe migrations are enabled.
      type: bool
    deletion_protected:
      description: Whether the branch is protected from deletion.
      type: bool
    cluster_name:
      description: The cluster size of the branch (from C(cluster_rate_name) where the platform's record names it so).
      type: str
    html_url:
      description: The branch in the web application.
      type: str
"""

import re

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.branches import (
    cluster_size, is_ready, other_size, readiness, with_cluster_name)
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.options import (
    CONNECTION, CREDENTIALS, ORGANIZATION, WAIT)
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import Resource, capital
from ansible_collections.planetscale.cloud.plugins.module_utils.schemas import lint_sentence, read_lint
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import Waiter, write_and_settle


def read_lint_errors(client, branch_path, keyspace=None, kind=None):
    """Every lint error of a branch's schema (every page), or those of one keyspace; none where the platform has no
    lint for the branch (read_lint)."""
    return read_lint(client, branch_path, "the branch", keyspace, kind)[0]


CLUSTER_SIZE = re.compile(r"(SIZE|PS)_[1-9][0-9]*")
MAJOR_VERSION = re.compile(r"[1-9][0-9]{0,2}")
ISO_8601 = re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?")


def check_create_options(size, point, major=None):
    """Refuse a malformed cluster_size, restore_point or major_version before any request."""
    if size is not None and not CLUSTER_SIZE.fullmatch(size):
        raise ModuleFailure("cluster_size must be of the form SIZE_10 (or PS_10), not %r." % size)
    if point is not None and not ISO_8601.fullmatch(point):
        raise ModuleFailure("restore_point must be an ISO 8601 timestamp such as 2026-01-31T12:00:00Z, not %r." % point)
    if major is not None and not MAJOR_VERSION.fullmatch(major):
        raise ModuleFailure("major_version must be a PostgreSQL major version such as 17, not %r." % major)


PRODUCTION_DELETE = ("%s is a production branch, which the platform does not delete: demote it first (a task with "
                     "production: false), then delete it.")
PROTECTED_DELETE = ("%s is protected from deletion (deletion_protected): set deletion_protected: false in this task, "
                    "or in a task before it, to delete it.")
DEFAULT_DEMOTE = ("%s is the database's default branch, which the platform does not demote: make another branch the "
                  "default first (planetscale.cloud.database with default_branch), then demote this one.")
UNSAFE_SCHEMA = ("%s has %d schema lint error%s, and safe migrations cannot be enabled until the schema has none; fix "
                 "%s: %s.")
# The settings that promote, demote, safe-migrations and PATCH change on an existing branch; never sent to create one.
LIFECYCLE = ("production", "safe_migrations", "deletion_protected")
CREATE_OPTIONS = ("backup_id", "restore_point", "seed_data", "cluster_size", "major_version")
# What only a PostgreSQL database takes; the platform refuses it on a MySQL one.
POSTGRES_ONLY = ("restore_point", "major_version")
NOT_POSTGRES = "%s only for PostgreSQL databases, and database %r is a %s database; leave %s out."
# Refusals of a write (not a missing resource, a credential or the rate limit) that a lint error can explain.
REFUSALS = (400, 409, 422)


def promotion(label, production):
    """The wait for a promotion (production true) or a demotion to show on the branch's record."""
    what = capital(label)
    return Waiter(
        "%s to be %s" % (label, "promoted to production" if production else "demoted to development"),
        done=lambda b: bool(b.get("production")) == production,
        state=lambda b: "production" if b.get("production") else "development", key="branch",
        failed=lambda b: "%s was deleted while waiting for it to be %s." % (
            what, "promoted" if production else "demoted") if b is None else None)


class Branch(Resource):
    """The rules of a database branch. Create-only: parent_branch, region. Changed in place: production,
    safe_migrations, deletion_protected.

    production, safe_migrations and deletion_protected are compared when given and changed in place, in this
    order: deletion protection (PATCH), safe migrations off (DELETE), promote or demote (and wait until the
    record shows it), safe migrations on (POST). Promoting and enabling safe migrations wait for the branch to
    be ready first. Enabling safe migrations is refused, before any write, while the schema has lint errors.
    """

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION, WAIT)
    argument_spec = dict(
        database=dict(type="str", required=True),
        name=dict(type="str", required=True),
        parent_branch=dict(type="str"),
        region=dict(type="str"),
        backup_id=dict(type="str"),
        restore_point=dict(type="str"),
        major_version=dict(type="str"),
        seed_data=dict(type="str", choices=["last_successful_backup"]),
        cluster_size=dict(type="str"),
        production=dict(type="bool"),
        safe_migrations=dict(type="bool"),
        deletion_protected=dict(type="bool"),
        wait_timeout=dict(type="int", default=600),
    )
    required_by = dict(backup_id="cluster_size")
    path_options = ("database", "name", "parent_branch")
    kind = "branch"
    api_path = ("databases", "{database}", "branches")
    key = "name"
    fields = ("name", "parent_branch", "region") + LIFECYCLE
    create_only = ("parent_branch", "region")
    required_to_create = ("parent_branch",)

    branch_options = ("name",)  # with parent_branch, held to the branch-name rule (Module.branch_naming)
    database_record = None  # the database's record, once a rule needs it

    def validate(self):
        super().validate()
        if self.params["state"] == "absent":
            contrary = [name for name in LIFECYCLE if self.params.get(name)]
            if contrary:
                raise ModuleFailure("state absent deletes the branch, so %s: true cannot hold; leave %s out." % (
                    contrary[0], "it" if len(contrary) == 1 else "them"))
        check_create_options(self.params["cluster_size"], self.params["restore_point"], self.params["major_version"])

    def label(self):
        return "branch %r of database %r" % (self.params["name"], self.params["database"])

    def read(self):
        return with_cluster_name(self.client.get(self.url(self.params["name"]), missing_ok=True))

    def managed(self, resource):
        fields = dict(name=resource.get("name"), parent_branch=resource.get("parent_branch"),
                      region=(resource.get("region") or {}).get("slug"))
        fields.update((name, bool(resource.get(name))) for name in LIFECYCLE if self.params.get(name) is not None)
        return fields

    def predict(self, resource, changes):
        if resource is not None:
            return dict(resource, **changes)
        # an unknown database or parent fails as creating would; the parent's kind is the new branch's
        parent = self.client.get(self.url(changes["parent_branch"])) or {}
        self.refuse_postgres_only(parent.get("kind"))
        if changes.get("safe_migrations"):
            self.refuse_lint_errors(changes["parent_branch"], kind=parent.get("kind"))
        branch = dict(name=self.params["name"], parent_branch=changes["parent_branch"], state="pending", ready=False)
        if changes.get("region"):
            branch["region"] = dict(slug=changes["region"])
        if parent.get("kind"):
            branch["kind"] = parent["kind"]
        branch.update((name, changes[name]) for name in LIFECYCLE if name in changes)
        return branch

    def create(self, values):
        if any(self.params[name] is not None for name in POSTGRES_ONLY):  # the database's kind, before the write
            self.refuse_postgres_only(self.database_kind(values["parent_branch"]))
        if values.get("safe_migrations"):  # the new branch starts with its parent's schema
            self.refuse_lint_errors(values["parent_branch"])
        body = dict((name, value) for name, value in values.items() if name not in LIFECYCLE)
        body.update((name, self.params[name]) for name in CREATE_OPTIONS if self.params[name] is not None)
        return with_cluster_name(super().create(body))

    def guard(self, resource):
        if self.params["state"] == "absent":
            if resource.get("production"):
                raise ModuleFailure(PRODUCTION_DELETE % capital(self.label()))
            if resource.get("deletion_protected") and self.params["deletion_protected"] is not False:
                raise ModuleFailure(PROTECTED_DELETE % capital(self.label()))
            return
        if self.params["production"] is False and resource.get("production") and self.is_default(resource):
            raise ModuleFailure(DEFAULT_DEMOTE % capital(self.label()))
        if self.params["safe_migrations"] and not resource.get("safe_migrations"):
            self.refuse_lint_errors(resource["name"], kind=resource.get("kind"))

    def database_kind(self, parent):
        """The kind of the database: its record's, else (a record that does not state it, as the platform's recorded
        databases do) that of the parent branch, whose record carries it."""
        self.database_record = self.client.get(self.org_path("databases", self.params["database"])) or {}
        if self.database_record.get("kind"):
            return self.database_record["kind"]
        return (self.client.get(self.url(parent), missing_ok=True) or {}).get("kind")

    def is_default(self, resource):
        """Whether the branch is its database's default branch: what the branch record says (default), else what the
        database record says (default_branch; read once, only to decide a demotion)."""
        if resource.get("default") is not None:
            return bool(resource["default"])
        if self.database_record is None:
            self.database_record = self.client.get(self.org_path("databases", self.params["database"])) or {}
        return self.database_record.get("default_branch") == resource.get("name")

    def refuse_postgres_only(self, kind):
        """Fail, before any write, when an option only a PostgreSQL database takes is given for another kind."""
        given = [name for name in POSTGRES_ONLY if self.params[name] is not None]
        if given and kind not in (None, "postgresql"):
            raise ModuleFailure(NOT_POSTGRES % (" and ".join(given) + (" is" if len(given) == 1 else " are"),
                                                self.params["database"], kind, "it" if len(given) == 1 else "them"))

    def refuse_lint_errors(self, branch, error=None, changed=False, kind=None):
        """Fail, naming every lint error, when the schema of branch (this one, or the parent a new one copies) has
        any; error is the API's refusal this explains, changed whether this run wrote before it. A PostgreSQL branch
        (kind, where the record is at hand) has no lint, and nothing is read."""
        errors = read_lint_errors(self.client, self.url(branch), kind=kind)
        if not errors:
            return
        subject = capital(self.label()) if branch == self.params["name"] else (
            "Branch %r, whose schema %s would start with," % (branch, self.label()))
        extra = dict(status=error.status, error=error.as_dict(), changed=changed) if error is not None else {}
        raise ModuleFailure(UNSAFE_SCHEMA % (subject, len(errors), "" if len(errors) == 1 else "s",
                                             "it" if len(errors) == 1 else "them", lint_sentence(errors)), **extra)

    def update(self, resource, changes):
        name, branch = resource["name"], resource
        wrote = self.created or "deletion_protected" in changes or changes.get("safe_migrations") is False
        if "deletion_protected" in changes:
            branch = self.client.patch(self.url(name), json=dict(deletion_protected=changes["deletion_protected"]))
        if changes.get("safe_migrations") is False:
            branch = self.client.delete(self.url(name, "safe-migrations")) or self.read()
        if "production" in changes:
            branch = self.ready(branch, wrote, "be %s" % ("promoted" if changes["production"] else "demoted"))
            branch = self.client.post(self.url(name, "promote" if changes["production"] else "demote")) or self.read()
            branch = promotion(self.label(), changes["production"]).wait(self.read, self.params["wait_timeout"],
                                                                         current=branch, changed=True)
        if changes.get("safe_migrations"):
            wrote = wrote or "production" in changes
            branch = self.ready(branch, wrote, "enable safe migrations")
            try:
                branch = self.client.post(self.url(name, "safe-migrations")) or self.read()
            except ApiError as error:
                if error.status not in REFUSALS:
                    raise
                self.refuse_lint_errors(name, error, changed=wrote)  # else the API's own words (lint read once)
                raise ModuleFailure(self.explain(error), status=error.status, error=error.as_dict(), changed=wrote)
        return with_cluster_name(branch)

    def ready(self, branch, changed, need):
        """The branch once it is ready (or asleep), which what the task does next needs. changed: whether this run
        has written already, for the result of a timeout."""
        if is_ready(branch):
            return branch
        return readiness(self.label(), "branch", need).wait(self.read, self.params["wait_timeout"], current=branch,
                                                            changed=changed)

    def delete(self, resource):
        if resource.get("deletion_protected") and self.params["deletion_protected"] is False:
            def lifted(error):  # pylint: disable=unused-argument
                found = self.read()
                return (found, True) if found is None or not found.get("deletion_protected") else None
            write_and_settle(lambda: self.client.patch(self.url(resource["name"]), json=dict(deletion_protected=False)),
                             read_back=lifted)
        super().delete(resource)

    def after_present(self, resource, changed):
        size, have = self.params["cluster_size"], cluster_size(resource)
        if not self.created and other_size(have, size):
            self.ctx.warn("%s has cluster size %s, not %s: cluster_size only shapes a new branch, so it is left as it "
                          "is." % (capital(self.label()), have, size))
        if not self.params["wait"] or is_ready(resource) or self.ctx.check_mode:
            return resource, changed
        branch = readiness(self.label(), "branch").wait(self.read, self.params["wait_timeout"], current=resource,
                                                        changed=changed)
        if not is_ready(branch):
            self.ctx.warn("%s is %s, so it is not ready to serve queries." % (capital(self.label()), branch["state"]))
        return branch, changed


def main():
    run_module(Branch)


if __name__ == "__main__":
    main()
