# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lifecycle of a branch, changed in place by the branch module: production (promote, demote), safe_migrations and
deletion_protected. Each is compared when the task gives it and changed in this order: deletion protection (PATCH),
safe migrations off (DELETE), promote or demote (and wait until the record shows it), safe migrations on (POST).
Promoting and enabling safe migrations wait for the branch to be ready first. Refused before any write: enabling safe
migrations while the schema has lint errors, demoting the database's default branch, deleting a production branch
or (unless the task lifts it) a protected one.
"""

from __future__ import annotations

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.branches import is_ready, readiness, with_cluster_name
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import Resource, capital
from ansible_collections.planetscale.cloud.plugins.module_utils.schemas import lint_sentence, read_lint
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import Waiter, write_and_settle

# The settings that promote, demote, safe-migrations and PATCH change on an existing branch; never sent to create one.
LIFECYCLE = ("production", "safe_migrations", "deletion_protected")
PRODUCTION_DELETE = ("%s is a production branch, which the platform does not delete: demote it first (a task with "
                     "production: false), then delete it.")
PROTECTED_DELETE = ("%s is protected from deletion (deletion_protected): set deletion_protected: false in this task, "
                    "or in a task before it, to delete it.")
DEFAULT_DEMOTE = ("%s is the database's default branch, which the platform does not demote: make another branch the "
                  "default first (planetscale.cloud.database with default_branch), then demote this one.")
UNSAFE_SCHEMA = ("%s has %d schema lint error%s, and safe migrations cannot be enabled until the schema has none; fix "
                 "%s: %s.")
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


class BranchLifecycle(Resource):
    """The hooks of the branch module's Resource that keep a branch's lifecycle (guard, update, delete), and the
    refusals and waits they need; the module's class extends it."""

    database_record = None  # the database's record, once a rule needs it

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

    def is_default(self, resource):
        """Whether the branch is its database's default branch: what the branch record says (default), else what the
        database record says (default_branch; read once, only to decide a demotion)."""
        if resource.get("default") is not None:
            return bool(resource["default"])
        if self.database_record is None:
            self.database_record = self.client.get(self.org_path("databases", self.params["database"])) or {}
        return self.database_record.get("default_branch") == resource.get("name")

    def refuse_lint_errors(self, branch, error=None, changed=False, kind=None):
        """Fail, naming every lint error, when the schema of branch (this one, or the parent a new one copies) has
        any; error is the API's refusal this explains, changed whether this run wrote before it. A PostgreSQL branch
        (kind, where the record is at hand) has no lint, and nothing is read."""
        errors = read_lint(self.client, self.url(branch), "the branch", None, kind)[0]  # every page
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
            branch = self.set_safe_migrations(name, False)
        if "production" in changes:
            branch = self.ready(branch, wrote, "be %s" % ("promoted" if changes["production"] else "demoted"))
            branch = self.client.post(self.url(name, "promote" if changes["production"] else "demote")) or self.read()
            branch = promotion(self.label(), changes["production"]).wait(self.read, self.params["wait_timeout"],
                                                                         current=branch, changed=True)
        if changes.get("safe_migrations"):
            wrote = wrote or "production" in changes
            branch = self.ready(branch, wrote, "enable safe migrations")
            try:
                branch = self.set_safe_migrations(name, True)
            except ApiError as error:
                if error.status not in REFUSALS:
                    raise
                self.refuse_lint_errors(name, error, changed=wrote)  # else the API's own words (lint read once)
                raise ModuleFailure(self.explain(error), status=error.status, error=error.as_dict(), changed=wrote)
        return with_cluster_name(branch)

    def set_safe_migrations(self, name, want):
        """POST (on) or DELETE (off) safe-migrations. After an answer that was lost the branch is read back, and a
        write it shows not applied is sent again as a PUT of the wanted value, which no resend can turn the wrong
        way."""
        url, sent = self.url(name, "safe-migrations"), []

        def send():
            if sent:
                return self.client.request("PUT", url, json=dict(safe_migrations=want)) or self.read()
            sent.append(want)
            return (self.client.post(url) if want else self.client.delete(url)) or self.read()

        def read_back(error):  # pylint: disable=unused-argument
            found = self.read()
            return (found, True) if found is not None and bool(found.get("safe_migrations")) == want else None
        return write_and_settle(send, read_back=read_back)[0]

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
