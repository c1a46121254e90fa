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
  - It serves MySQL and PostgreSQL databases alike. O(backup_id), O(restore_point), O(seed_data) and O(major_version)
    only shape a new branch, and are never compared with an existing branch (the API does not return them).
  - It changes the capacity of a branch in place (O(cluster_size), O(replicas), O(storage), O(parameters),
    O(vtgate)). Only the settings the task gives are compared; what differs is sent at once, in one change request
    on a PostgreSQL branch, and as a cluster change and a VTGate resize request on a MySQL branch. The task waits
    until each request completes (O(wait), O(wait_timeout)) and fails at once, naming the state, when one ends
    V(canceled). A cluster size the organization does not offer for the engine, an option of the other engine, a
    parameter the branch does not have and a value outside the range or the choices the platform lists for it fail
    before any write, also in check mode.
  - A change or resize request of the branch that is still running when the task starts (made elsewhere, for example
    in the web console) is waited for first; with O(wait=false) the task fails instead and says so.
  - A capacity change needs the branch ready; a new branch is waited for first, whatever O(wait) says.
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
      - The cluster size of the branch, a name M(planetscale.cloud.cluster_size_info) lists for the database's engine,
        for example V(PS_10) or V(PS_DEV) (MySQL), V(PS_10_AWS_ARM) or V(PS_DEV_AWS_X86) (PostgreSQL), or a Metal size
        such as V(M7_160_D_METAL_460) or V(M1_10_AWS_AMD_D_METAL_10). V(SIZE_10), an older spelling, is V(PS_10).
      - A new branch is created with it; an existing branch of another size is resized. Before a resize (and before
        creating a branch with other capacity settings), a size the organization may not use for the engine fails
        the task, naming those it may; otherwise only a value that cannot be a name (blank, spaces, other characters
        than letters, digits and V(_)) is refused before any request, and the platform's refusal is the task's
        sentence.
      - Required with O(backup_id).
    type: str
  replicas:
    description:
      - The number of replicas of a PostgreSQL branch. What a branch has is the count its record states, else that of
        its newest completed change request (without either, 2 when its record says it has replicas, else 0).
      - PostgreSQL branches only; on a MySQL branch the task fails before any write.
    type: int
    version_added: 0.3.0
  storage:
    description:
      - The storage of a PostgreSQL branch; only the suboptions given are compared and sent. What a branch has is
        that of its newest completed change request, and the IOPS its record states (C(cluster_iops)); a branch
        without one has unknown storage otherwise, so what is given is sent (the platform answers that nothing changes
        when it has it already).
      - A value outside the range given below, or O(storage.minimum_bytes) above O(storage.maximum_bytes), fails the
        task before any request, also in check mode.
      - PostgreSQL branches only; on a MySQL branch the task fails before any write.
    type: dict
    version_added: 0.3.0
    suboptions:
      minimum_bytes:
        description: The smallest storage, in bytes (0 or more).
        type: int
      maximum_bytes:
        description: The largest storage autoscaling may grow to, in bytes (0 or more).
        type: int
      autoscaling:
        description: Whether the storage grows by itself.
        type: bool
      iops:
        description: The IOPS of the storage (the platform takes 100 to 64000).
        type: int
      throughput_mibs:
        description: The throughput of the storage, in MiB/s (the platform takes 125 to 4000).
        type: int
  parameters:
    description:
      - "PostgreSQL parameters of the branch, by namespace (V(pgconf), V(patroni), V(pgbouncer)), then name, then
        value, for example C({pgconf: {work_mem: 8192}}). Only the parameters given are compared and sent; the others
        keep their values."
      - Each is checked against the branch's parameters (listed by M(planetscale.cloud.postgres_parameter_info))
        before any write. A parameter the branch does not have, an immutable one, and a value outside its range or
        its choices fail the task with a sentence.
      - A parameter whose change restarts PostgreSQL (C(restart) in the branch's parameters, for example
        C(max_connections) or C(shared_buffers)) is changed only with O(allow_restart); see there.
      - PostgreSQL branches only; on a MySQL branch the task fails before any write.
    type: dict
    version_added: 0.3.0
  allow_restart:
    description:
      - Accept that changing a parameter restarts PostgreSQL, which drops every connection to the branch (the
        platform's C(restart) of the parameter, which M(planetscale.cloud.postgres_parameter_info) lists), in the
        spirit of C(apply_immediately) of amazon.aws's RDS modules.
      - Without it, a task that would change such a parameter fails before any write, naming the parameters and this
        option. Check mode warns and names them, as do the diff and RV(restart_parameters), whatever it says.
      - A branch the task creates serves no one yet, and takes its parameters without it.
    type: bool
    default: false
    version_added: 0.3.0
  cancel_pending:
    description:
      - Cancel the change and resize requests of the branch that have not started resizing (state V(queued) or
        V(pending)), made elsewhere or by a task with O(wait=false), with the platform's cancel of a change request.
        A branch with none is not a change. Other capacity settings of the task are compared and sent after it.
      - A request already resizing cannot be canceled; with none to cancel beside it, the task fails and says so.
    type: bool
    default: false
    version_added: 0.3.0
  vtgate:
    description:
      - The VTGates of a MySQL branch, changed by a VTGate resize request; only the suboptions given are compared and
        sent. What a branch has is what its record states, else what its newest completed VTGate resize request asked
        for (the platform's branch records may state none of it).
      - MySQL branches only; on a PostgreSQL branch the task fails before any write.
    type: dict
    version_added: 0.3.0
    suboptions:
      size:
        description: The size of each VTGate, for example V(VTG_10).
        type: str
      count:
        description: The number of VTGates (the smallest number with O(vtgate.autoscaling)).
        type: int
      max_count:
        description: The largest number of VTGates autoscaling may start.
        type: int
      autoscaling:
        description: Whether the number of VTGates follows their load.
        type: bool
      target_cpu_utilization:
        description: The CPU utilization, in percent, that autoscaling aims at.
        type: int
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
    description:
      - Wait until the branch is ready to serve queries, polling with growing intervals.
      - Wait until each change or resize request the task makes completes. V(false) returns the requests as they
        are (RV(change_requests)), and refuses to start while a request made elsewhere is running.
  wait_timeout:
    description:
      - Seconds to wait for the branch to be ready, for a promotion or demotion to be done, and for each change or
        resize request to complete. The task fails after that, with the last state.
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

- name: Scale a MySQL branch to a larger cluster with more VTGates, and wait until it is done
  planetscale.cloud.branch:
    organization: acme
    database: app
    name: main
    cluster_size: PS_20
    vtgate:
      size: VTG_10
      count: 2

- name: Give a PostgreSQL branch two replicas and more memory for sorts, in one change request
  planetscale.cloud.branch:
    organization: acme
    database: pgapp
    name: main
    replicas: 2
    parameters:
      pgconf:
        work_mem: 8192

- name: Raise max_connections, which restarts PostgreSQL, and say that the restart is accepted
  planetscale.cloud.branch:
    organization: acme
    database: pgapp
    name: main
    parameters:
      pgconf:
        max_connections: 200
    allow_restart: true

- name: Cancel the change request of main that has not started yet (made in the web console, say)
  planetscale.cloud.branch:
    organization: acme
    database: pgapp
    name: main
    cancel_pending: true

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
capacity:
  description:
    - The capacity settings the task gave (O(cluster_size) of an existing branch, O(replicas), O(storage),
      O(parameters), O(vtgate)), as the branch has them after the task; in check mode, as it would have them.
    - Parameter values are strings, as the platform keeps them.
  returned: when the task gives any of them
  type: dict
  version_added: 0.3.0
  sample: {"replicas": 2, "parameters": {"pgconf": {"work_mem": "8192"}}}
change_requests:
  description:
    - The change and VTGate resize requests the task made, as last read (C(completed) when the task waited), each the
      platform's record (C(id), C(state), the values it asks for and their C(previous_) ones). Empty when nothing
      differed, and in check mode.
  returned: when the task gives any capacity setting
  type: list
  elements: dict
  version_added: 0.3.0
restart_parameters:
  description:
    - The parameters the task changes (in check mode, would change) whose change restarts PostgreSQL, as
      C(namespace.name), for example V(pgconf.max_connections). Empty when none does. The diff names them too.
  returned: when the task gives O(parameters)
  type: list
  elements: str
  version_added: 0.3.0
canceled_requests:
  description:
    - The change and resize requests O(cancel_pending) canceled (in check mode, would cancel), each as read before
      the cancel. Empty when none was waiting.
  returned: when the task sets O(cancel_pending)
  type: list
  elements: dict
  version_added: 0.3.0
"""

import re

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.branch_capacity import (
    BranchCapacity, check_capacity_options)
from ansible_collections.planetscale.cloud.plugins.module_utils.branch_lifecycle import LIFECYCLE, BranchLifecycle
from ansible_collections.planetscale.cloud.plugins.module_utils.branches import (
    check_cluster_size, is_ready, readiness, with_cluster_name)
from ansible_collections.planetscale.cloud.plugins.module_utils.capacity import REQUESTS
from ansible_collections.planetscale.cloud.plugins.module_utils.capacity_changes import cancel_pending
from ansible_collections.planetscale.cloud.plugins.module_utils.options import (
    CONNECTION, CREDENTIALS, ORGANIZATION, WAIT)
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import capital


MAJOR_VERSION = re.compile(r"[1-9][0-9]{0,2}")
ISO_8601 = re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?")


def check_create_options(size, point, major=None):
    """Refuse a malformed cluster_size, restore_point or major_version before any request."""
    check_cluster_size(size)
    if point is not None and not ISO_8601.fullmatch(point):
        raise ModuleFailure("restore_point must be an ISO 8601 timestamp such as 2026-01-31T12:00:00Z, not %r." % point)
    if major is not None and not MAJOR_VERSION.fullmatch(major):
        raise ModuleFailure("major_version must be a PostgreSQL major version such as 17, not %r." % major)


CREATE_OPTIONS = ("backup_id", "restore_point", "seed_data", "cluster_size", "major_version")
# What only a PostgreSQL database takes; the platform refuses it on a MySQL one.
POSTGRES_ONLY = ("restore_point", "major_version")
NOT_POSTGRES = "%s only for PostgreSQL databases, and database %r is a %s database; leave %s out."


class Branch(BranchLifecycle):
    """The rules of a database branch. Create-only: parent_branch, region, and the options that shape a new branch.
    Changed in place: production, safe_migrations and deletion_protected (BranchLifecycle: in which order, what is
    refused), and the capacity the task gives (BranchCapacity), after which the branch is waited for until ready.
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
        replicas=dict(type="int"),
        storage=dict(type="dict", options=dict(minimum_bytes=dict(type="int"), maximum_bytes=dict(type="int"),
                                               autoscaling=dict(type="bool"), iops=dict(type="int"),
                                               throughput_mibs=dict(type="int"))),
        parameters=dict(type="dict"),
        vtgate=dict(type="dict", options=dict(size=dict(type="str"), count=dict(type="int"),
                                              max_count=dict(type="int"), autoscaling=dict(type="bool"),
                                              target_cpu_utilization=dict(type="int"))),
        allow_restart=dict(type="bool", default=False),
        cancel_pending=dict(type="bool", default=False),
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
    capacity = None  # the capacity the task gives (BranchCapacity), when it gives any
    canceled = ()  # the requests cancel_pending cancels, as read before

    def validate(self):
        super().validate()
        if self.params["state"] == "absent":
            contrary = [name for name in LIFECYCLE if self.params.get(name)]
            if contrary:
                raise ModuleFailure("state absent deletes the branch, so %s: true cannot hold; leave %s out." % (
                    contrary[0], "it" if len(contrary) == 1 else "them"))
        check_create_options(self.params["cluster_size"], self.params["restore_point"], self.params["major_version"])
        check_capacity_options(self.params)

    def present(self, resource):
        new = resource is None
        given = [name for name in ("replicas", "storage", "parameters", "vtgate") if self.params[name] is not None]
        if (given or not new and self.params["cluster_size"] is not None) and (not new or self.params["parent_branch"]):
            self.capacity = BranchCapacity(self, new)
            source = resource or self.client.get(self.url(self.params["parent_branch"] or self.params["name"])) or {}
            self.capacity.check(source, source.get("kind") or self.database_kind(source.get("name")))
            self.capacity.runs = None if new else self.capacity.read(resource, checked=True)
            if not new and not self.ctx.check_mode:  # a restart not allowed fails before any write
                self.capacity.consent(self.capacity.changes())
        if self.params["cancel_pending"] and not new:  # after every refusal; what it cancels is waited for no more
            kinds = ("change",) if resource.get("kind") == "postgresql" else ("change", "resize")
            self.canceled = cancel_pending(self, self.url(resource["name"]), dict((k, REQUESTS[k]) for k in kinds))
            if self.capacity is not None:
                self.capacity.runs = dict((k, r) for k, r in self.capacity.runs.items() if r not in self.canceled)
        return super().present(resource)

    def label(self):
        return "branch %r of database %r" % (self.params["name"], self.params["database"])

    def read(self):
        return with_cluster_name(self.client.get(self.url(self.params["name"]), missing_ok=True))

    def managed(self, resource):
        fields = dict(name=resource.get("name"), parent_branch=resource.get("parent_branch"),
                      region=(resource.get("region") or {}).get("slug"))
        fields.update((name, bool(resource.get(name))) for name in LIFECYCLE if self.params.get(name) is not None)
        if self.capacity is not None:
            fields.update(self.capacity.view(self.capacity.have), restart_parameters=self.capacity.restarts or None)
        return fields

    def result_keys(self, resource):
        keys = dict(branch=resource)
        if self.capacity is not None:
            keys.update(capacity=self.capacity.view(self.capacity.have), change_requests=self.capacity.requests)
            if self.params["parameters"] is not None:
                keys["restart_parameters"] = self.capacity.restarts
        if self.params["cancel_pending"]:
            keys["canceled_requests"] = list(self.canceled)
        return keys

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

    def database_kind(self, parent):
        """The kind of the database: its record's, else (a record that does not state it, as the platform's recorded
        databases do) that of the parent branch, whose record carries it."""
        self.database_record = self.client.get(self.org_path("databases", self.params["database"])) or {}
        if self.database_record.get("kind"):
            return self.database_record["kind"]
        return (self.client.get(self.url(parent), missing_ok=True) or {}).get("kind")

    def refuse_postgres_only(self, kind):
        """Fail, before any write, when an option only a PostgreSQL database takes is given for another kind."""
        given = [name for name in POSTGRES_ONLY if self.params[name] is not None]
        if given and kind not in (None, "postgresql"):
            raise ModuleFailure(NOT_POSTGRES % (" and ".join(given) + (" is" if len(given) == 1 else " are"),
                                                self.params["database"], kind, "it" if len(given) == 1 else "them"))

    def after_present(self, resource, changed):
        changed = changed or bool(self.canceled)
        if self.capacity is not None:
            if not self.ctx.check_mode and not is_ready(resource):
                resource = self.ready(resource, changed, "be resized")
            resource, resized = self.capacity.apply(resource, self.capacity.runs)
            changed = changed or resized
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
