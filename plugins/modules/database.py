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
      - The cluster size of the new database, such as V(PS_10). Required to create a database.
      - M(planetscale.cloud.cluster_size_info) lists the sizes of the organization.
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
from ansible_collections.planetscale.cloud.plugins.module_utils.databases import (
    PROTECTED_DELETE, SETTINGS, as_record, check_database_options, delete_or_request, deletion_warning, is_ready,
    managed, patch_body, readiness, wanted, warn_about_cluster_size)
from ansible_collections.planetscale.cloud.plugins.module_utils.options import (
    CONNECTION, CREDENTIALS, ORGANIZATION, WAIT)
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import Resource, capital

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
        database = readiness(self.label()).wait(self.read, self.params["wait_timeout"], current=resource,
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
