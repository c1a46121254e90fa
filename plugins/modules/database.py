#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: database
short_description: Create, configure and delete databases
version_added: 0.2.0
description:
  - Ensures that a database exists, by default waits until it is ready, and applies the settings given in one request.
  - Ensures that a database does not exist. A database with O(deletion_protected) is not deleted; the task fails
    before anything is sent. When the organization requires several administrators to delete a database, the
    platform opens a deletion request instead of deleting; the task reports it (changed, RV(deletion_request), a
    warning) and a later run sends no second request while it is pending.
  - O(region) and O(kind) can only be chosen when the database is created; a difference fails and names the field.
    When the database's record does not state its region or kind (the platform leaves them out of some answers), it
    is not compared.
    O(cluster_size), O(replicas), O(major_version) and O(storage) only shape a new database and are not compared
    (an existing database whose default branch has another cluster size gets a warning).
  - The database is ready when its record says C(ready) is true or, where the record has no C(ready) field, when
    its C(state) is V(ready).
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  name:
    description:
      - The name of the database. To create it, 1 to 63 lower-case letters, digits, V(-) and V(_), starting with a
        letter or digit. O(state=absent) takes any name.
    type: str
    required: true
  new_name: {description: Rename the database. A database already named so is not a change., type: str}
  state:
    description:
      - V(present) creates the database if it does not exist and applies the settings that differ.
      - V(absent) deletes it; a database that does not exist is not a change.
    type: str
    choices: [present, absent]
    default: present
  cluster_size:
    description:
      - The cluster size of the new database, such as V(PS_10) (MySQL) or V(PS_10_AWS_ARM) (PostgreSQL). Required to
        create a database.
      - M(planetscale.cloud.cluster_size_info) lists the sizes of the organization for each engine; the platform refuses
        another, in the task's sentence.
    type: str
  region: {description: "The slug of the region of a new database; by default the organization's default.", type: str}
  kind: {description: The engine of a new database; by default V(mysql)., type: str, choices: [mysql, postgresql]}
  replicas: {description: "Replicas of a new database: V(0) for none, 2 or more for high availability.", type: int}
  major_version: {description: The PostgreSQL major version of a new database (O(kind=postgresql) only)., type: str}
  storage:
    description: The storage bounds of a new database.
    type: dict
    suboptions:
      minimum_storage_bytes: {description: The least storage., type: int}
      maximum_storage_bytes: {description: The most storage., type: int}
  default_branch: {description: The branch that is the database's default., type: str}
  require_approval_for_deploy: {description: Deploy requests need the approval of another administrator., type: bool}
  allow_data_branching: {description: New branches may be seeded with data (MySQL only)., type: bool}
  allow_foreign_key_constraints: {description: Foreign key constraints are allowed (MySQL only)., type: bool}
  automatic_migrations:
    description: Copy migration data to new branches and deploy requests (MySQL only); needs O(migration_framework).
    type: bool
  migration_framework: {description: "The migration framework, such as V(rails) (MySQL only).", type: str}
  migration_table_name: {description: The table of the migration framework (MySQL only)., type: str}
  restrict_branch_region: {description: New branches must be in the database's region., type: bool}
  insights_raw_queries: {description: Insights collects whole queries., type: bool}
  deletion_protected: {description: The platform refuses to delete the database., type: bool}
  production_branch_web_console: {description: The web console may be used on production branches., type: bool}
  wait: {description: "Wait until the database is ready, polling with growing intervals."}
  wait_timeout: {description: Seconds to wait for the database to be ready., default: 600}
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.api.wait
  - planetscale.cloud.attributes.resource
seealso:
  - module: planetscale.cloud.database_info
  - module: planetscale.cloud.cluster_size_info
"""

EXAMPLES = r"""
- name: Create a database, wait until it is ready, and protect it
  planetscale.cloud.database:
    organization: acme
    name: analytics
    cluster_size: PS_10
    region: eu-west
    deletion_protected: true
    require_approval_for_deploy: true

- name: Turn its deletion protection off
  planetscale.cloud.database:
    organization: acme
    name: analytics
    deletion_protected: false

- name: Delete the database
  planetscale.cloud.database:
    organization: acme
    name: analytics
    state: absent
  register: gone

- name: Say when another administrator must approve the deletion
  ansible.builtin.debug:
    msg: "Deletion request {{ gone.deletion_request.id }} waits for another administrator."
  when: gone.deletion_request is defined
"""

RETURN = r"""
database:
  description:
    - The database (name, state, ready, region, kind, default_branch and the settings). In check mode, when it
      would be created, the fields known before creating it. After a deletion request, the database as it stays.
    - The fields the platform's record has; some records carry no C(ready) or C(kind).
  returned: O(state=present), or a deletion request
  type: dict
  sample: {name: shop, state: ready, ready: true, kind: mysql, default_branch: main, deletion_protected: true}
deletion_request:
  description: The pending deletion request, when the organization requires several administrators to delete.
  returned: O(state=absent) and the platform opened (or has) a deletion request
  type: dict
  sample: {id: k2l3m4n5o6p7, state: pending, actor: {display_name: Jane Doe}}
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.branches import (
    check_cluster_size, check_storage, cluster_size, is_ready, other_size, readiness)
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError
from ansible_collections.planetscale.cloud.plugins.module_utils.databases import NEW_NAME
from ansible_collections.planetscale.cloud.plugins.module_utils.options import (
    CONNECTION, CREDENTIALS, ORGANIZATION, WAIT)
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import Resource, capital
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import write_and_settle

# The settings that PATCH takes, by the names the API's PATCH gives them; the record names two of them otherwise.
SETTINGS = ("default_branch", "require_approval_for_deploy", "allow_data_branching", "allow_foreign_key_constraints",
            "automatic_migrations", "migration_framework", "migration_table_name", "restrict_branch_region",
            "insights_raw_queries", "deletion_protected", "production_branch_web_console")
RECORD_NAMES = dict(allow_foreign_key_constraints="foreign_keys_enabled")
VITESS_ONLY = ("automatic_migrations", "migration_framework", "migration_table_name", "allow_data_branching",
               "allow_foreign_key_constraints")


def check_database_options(params):
    """Refuse, before any request, input the platform would refuse or that cannot mean anything."""
    present = params["state"] == "present"
    for option in ("name", "new_name") if present else ():
        value = params.get(option)
        if value is not None and not NEW_NAME.fullmatch(value):
            raise ModuleFailure("%s must be a database name the platform accepts: 1 to 63 characters, lower-case "
                                "letters, digits, '-' and '_', starting with a letter or digit; not %r." % (option, value))
    if not present and params.get("new_name") is not None:
        raise ModuleFailure("new_name renames a database that is kept: it does not go with state absent.")
    check_cluster_size(params.get("cluster_size"))
    replicas = params.get("replicas")
    if replicas is not None and (replicas < 0 or replicas == 1):
        raise ModuleFailure("replicas must be 0 (no high availability) or 2 or more, not %s." % replicas)
    if params.get("kind") == "postgresql":
        refused = [name for name in VITESS_ONLY if params.get(name) is not None]
        if refused:
            raise ModuleFailure("%s only apply to MySQL (Vitess) databases, not to kind postgresql." % ", ".join(refused))
    elif params.get("major_version") is not None:
        raise ModuleFailure("major_version is only for kind postgresql.")
    check_storage(params.get("storage") or {})


def managed(record):
    """The managed fields of a database record, by the names of the module's options."""
    fields = dict((name, record.get(RECORD_NAMES.get(name, name))) for name in SETTINGS)
    fields.update(name=record.get("name"), region=(record.get("region") or {}).get("slug"), kind=record.get("kind"))
    return fields


def wanted(params):
    """The managed fields the task gives; the name only where new_name renames the database."""
    fields = dict((name, params[name]) for name in SETTINGS + ("region", "kind") if params.get(name) is not None)
    if params.get("new_name"):
        fields["name"] = params["new_name"]
    return fields


def patch_body(changes):
    """Changed managed fields as the PATCH body: the name is new_name there."""
    return dict(("new_name" if name == "name" else name, value) for name, value in changes.items())


def as_record(values):
    """Option values (a create's or an update's) as the fields of a database record, for a prediction."""
    record = dict((RECORD_NAMES.get(name, name), value) for name, value in values.items() if name != "region")
    if values.get("region"):
        record["region"] = dict(slug=values["region"])
    return record


def deletion_warning(label, organization, request, opened):
    """The warning for a deletion request that waits for another administrator (opened: by this run)."""
    actor = (request.get("actor") or {}).get("display_name")
    return ("%s was not deleted: organization %r requires several administrators to delete a database, so the "
            "platform %s deletion request %s%s. The database stays until another administrator of the organization "
            "also requests its deletion (or the request is withdrawn in the platform's UI)." % (
                capital(label), organization, "opened" if opened else "already has", request.get("id") or "(no id)",
                " by %s" % actor if actor else ""))


PROTECTED_DELETE = ("%s is deletion protected, so the platform does not delete it: set deletion_protected to false "
                    "(with state present) first, then delete it.")


def delete_or_request(module, resource):
    """DELETE the database of a Resource module: None once deleted, or the deletion request the platform opened
    instead. A lost answer is read back (gone, or a pending request: applied; still there without one: sent again)."""
    def read_back(error):  # pylint: disable=unused-argument
        found = module.read_record()
        if found is None:
            return None, True
        if found.get("deletion_request"):
            return found["deletion_request"], True
        return None
    try:
        answer = write_and_settle(lambda: module.client.delete(module.url(resource["name"]), missing_ok=True),
                                  read_back=read_back)[0]
    except ApiError as error:
        if not error.outcome_unknown:
            module.explain_refusal(error)  # a refusal that guard() explains (protected meanwhile) says so
        raise
    return answer if isinstance(answer, dict) and answer else None


def warn_about_cluster_size(module, resource):
    """Warn when the default branch of an existing database has another cluster size than the task gives."""
    url = module.url(resource["name"], "branches", resource.get("default_branch") or "main")
    have, want = cluster_size(module.client.get(url, missing_ok=True) or {}), module.params["cluster_size"]
    if other_size(have, want):
        module.ctx.warn("%s has cluster size %s on its default branch, not %s: cluster_size only shapes a new "
                        "database, so it is left as it is." % (capital(module.label()), have, want))


CREATE_OPTIONS = ("cluster_size", "replicas", "major_version", "storage")
OPTIONS = dict((name, dict(type="bool")) for name in SETTINGS)
OPTIONS.update(default_branch=dict(type="str"), migration_framework=dict(type="str"),
               migration_table_name=dict(type="str"))


class Database(Resource):
    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION, WAIT)
    argument_spec = dict(
        OPTIONS,
        name=dict(type="str", required=True),
        new_name=dict(type="str"),
        cluster_size=dict(type="str"),
        region=dict(type="str"),
        kind=dict(type="str", choices=["mysql", "postgresql"]),
        replicas=dict(type="int"),
        major_version=dict(type="str"),
        storage=dict(type="dict", options=dict(minimum_storage_bytes=dict(type="int"),
                                               maximum_storage_bytes=dict(type="int"))),
        wait_timeout=dict(type="int", default=600),
    )
    path_options = ("name", "new_name", "default_branch")
    names = ("migration_framework", "migration_table_name")
    kind = "database"
    api_path = ("databases",)
    key = "name"
    fields = ("name", "region", "kind") + SETTINGS
    create_only = ("region", "kind")
    required_to_create = ("cluster_size",)

    def validate(self):
        super().validate()
        check_database_options(self.params)

    def label(self):
        return "database %r" % self.params["name"]

    def read(self):
        found = self.client.get(self.url(self.params["name"]), missing_ok=True)
        if found is None and self.params["state"] == "present" and self.params["new_name"]:
            found = self.client.get(self.url(self.params["new_name"]), missing_ok=True)  # renamed by an earlier run
        return found

    def managed(self, resource):
        return managed(resource)

    def wanted(self, resource):
        return wanted(self.params)

    def predict(self, resource, changes):
        new = dict(name=self.params["name"], state="pending", ready=False)
        return dict(resource or new, **as_record(changes))

    def create(self, values):
        body = dict(name=self.params["name"], region=values.get("region"), kind=values.get("kind"))
        body.update((name, self.params[name]) for name in CREATE_OPTIONS)
        return self.client.post(self.url(), json=dict((k, v) for k, v in body.items() if v is not None))

    def update(self, resource, changes):
        return self.client.patch(self.url(resource["name"]), json=patch_body(changes))

    def guard(self, resource):
        if self.params["state"] == "absent" and resource.get("deletion_protected"):
            raise ModuleFailure(PROTECTED_DELETE % capital(self.label()))

    def after_present(self, resource, changed):
        if not self.created and self.params["cluster_size"]:
            warn_about_cluster_size(self, resource)
        if not self.params["wait"] or is_ready(resource) or self.ctx.check_mode:
            return resource, changed
        database = readiness(self.label(), "database").wait(self.read, self.params["wait_timeout"], current=resource,
                                                            changed=changed)
        if not is_ready(database):
            self.ctx.warn("%s is %s, so it is not ready to serve queries." % (capital(self.label()), database["state"]))
        return database, changed

    def absent(self, resource):
        if resource is None:
            return super().absent(resource)
        pending = resource.get("deletion_request")
        if pending:
            self.ctx.warn(deletion_warning(self.label(), self.params["organization"], pending, opened=False))
            return dict(self.outcome(False, resource, managed(resource)), deletion_request=pending)
        self.guard(resource)
        if self.ctx.check_mode:
            if resource.get("multiple_admins_required_for_deletion"):
                self.ctx.warn("%s would not be deleted yet: organization %r requires several administrators to delete "
                              "a database, so the platform would open a deletion request." % (
                                  capital(self.label()), self.params["organization"]))
                return self.outcome(True, resource, managed(resource))
            return self.outcome(True, None, managed(resource))
        request = delete_or_request(self, resource)
        if request is None:
            return self.outcome(True, None, managed(resource))
        self.ctx.warn(deletion_warning(self.label(), self.params["organization"], request, opened=True))
        return dict(self.outcome(True, resource, managed(resource)), deletion_request=request)


def main():
    run_module(Database)


if __name__ == "__main__":
    main()
