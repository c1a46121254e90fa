#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: postgres_bouncer
short_description: Create, resize and delete a dedicated PgBouncer of a PostgreSQL branch
version_added: 0.3.0
description:
  - Ensures that a dedicated PgBouncer, a connection pooler that runs on nodes of its own, exists on a PostgreSQL
    branch with the O(target), O(size), O(replicas_per_cell) and O(parameters) given, or that it does not exist.
  - A bouncer is named within its branch by O(name). A new one is created with O(target), O(size) and
    O(replicas_per_cell); everything that differs on an existing one, and O(parameters) of a new one, changes in
    place through one resize request, which the task waits for until it has completed (O(wait)). A resize request
    that ends V(canceled) fails the task at once with a sentence.
  - A resize request already running on the bouncer (made elsewhere, or by a task that did not wait) is waited for
    first when O(wait=true); the platform updates a pending request rather than make a second one.
  - Only options given are compared. The PgBouncer that runs beside the branch's primary is not a dedicated
    bouncer; its parameters are the branch's (O(planetscale.cloud.branch#module:parameters)).
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
    description: The name of the bouncer; lower-case letters, digits and C(-), starting with a letter or digit.
    type: str
    required: true
  state:
    description:
      - V(present) creates the bouncer when missing and resizes it where it differs.
      - V(absent) deletes it; a bouncer that does not exist is not a change.
    type: str
    choices: [present, absent]
    default: present
  target:
    description:
      - The servers the bouncer sends connections to. A new bouncer targets V(primary) unless told.
      - V(replica_az_affinity) prefers the replicas in the client's availability zone.
    type: str
    choices: [primary, replica, replica_az_affinity]
  size:
    description: The size of each bouncer node. A new bouncer is V(PGB_5) unless told.
    type: str
    choices: [PGB_5, PGB_10, PGB_20, PGB_40, PGB_80, PGB_160]
  replicas_per_cell:
    description: How many bouncer nodes run in each availability zone, 1 or more. A new bouncer has 1 unless told.
    type: int
  parameters:
    description:
      - "PgBouncer parameters by namespace, then name, then value, as O(planetscale.cloud.branch#module:parameters)
        takes them: the namespace C(pgbouncer) of M(planetscale.cloud.postgres_parameter_info), for example
        C({pgbouncer: {default_pool_size: 50}}) (C(default_pool_size), C(max_client_conn), C(pool_mode)...). The names
        alone, without the namespace (C({default_pool_size: 50})), are taken too. Values are compared as the platform
        stores them (text; numbers by value)."
      - Parameters not named are left as they are. A parameter whose change restarts the bouncer (the platform's
        C(restart) of the bouncer's parameter) needs O(allow_restart).
    type: dict
  allow_restart:
    description:
      - Accept that changing a parameter restarts the bouncer's nodes, which drops their connections (a parameter
        whose C(restart) is true in the bouncer's parameters). Without it such a change fails the task before any
        write and names the parameters; check mode warns and names them (RV(restart_parameters)).
      - A bouncer the task creates serves no one yet, and takes its parameters without it.
    type: bool
    default: false
    version_added: 0.3.0
  cancel_pending:
    description:
      - Cancel the resize request of the bouncer that has not started resizing (state V(pending)), made elsewhere or by
        a task with O(wait=false). A bouncer with none is not a change. What the task gives is compared and sent after
        it.
      - A request already resizing cannot be canceled; with none to cancel beside it, the task fails and says so.
    type: bool
    default: false
    version_added: 0.3.0
  wait:
    description: Wait until the resize request has completed, polling with growing intervals.
  wait_timeout:
    description: Seconds to wait for a resize request. The task fails after that, with its last state.
    default: 600
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.api.wait
  - planetscale.cloud.attributes.resource
notes:
  - The platform answers a bouncer with no host. A client connects to the branch's host (a role's
    RV(planetscale.cloud.postgres_role#module:connection.host)) on port 6432 with the role's user name followed by
    RV(connection.username_suffix); the second example builds such a connection.
seealso:
  - module: planetscale.cloud.postgres_bouncer_info
  - module: planetscale.cloud.postgres_role
  - module: planetscale.cloud.postgres_parameter_info
"""

EXAMPLES = r"""
- name: A PgBouncer for the replicas, two nodes per zone, with bigger pools
  planetscale.cloud.postgres_bouncer:
    organization: acme
    database: pgapp
    branch: main
    name: read-pool
    target: replica
    size: PGB_10
    replicas_per_cell: 2
    parameters:
      pgbouncer:
        default_pool_size: 50
  register: bouncer

- name: A role whose connections go through it
  planetscale.cloud.postgres_role:
    organization: acme
    database: pgapp
    branch: main
    name: reporting
    inherited_roles: [pg_read_all_data]
  register: role
  no_log: true

- name: Its connection details through the bouncer
  ansible.builtin.set_fact:
    through_bouncer: >-
      {{ role.connection | default({}) | combine({'port': bouncer.connection.port,
         'username': (role.connection.username | default('')) ~ bouncer.connection.username_suffix}) }}
  no_log: true

- name: Resize it in place (one resize request, waited for)
  planetscale.cloud.postgres_bouncer:
    organization: acme
    database: pgapp
    branch: main
    name: read-pool
    size: PGB_20

- name: Cancel its resize that has not started yet, if it has one
  planetscale.cloud.postgres_bouncer:
    organization: acme
    database: pgapp
    branch: main
    name: read-pool
    cancel_pending: true

- name: Delete it
  planetscale.cloud.postgres_bouncer:
    organization: acme
    database: pgapp
    branch: main
    name: read-pool
    state: absent
"""

RETURN = r"""
bouncer:
  description:
    - The bouncer (id, name, target, sku, replicas_per_cell, parameters, branch, created_at...). In check mode, and
      with O(wait=false), as it will be once the resize request completes.
  returned: O(state=present)
  type: dict
  sample: {id: b1c2d3e4f5a6, name: read-pool, target: replica, sku: {name: PGB_10}, replicas_per_cell: 2}
connection:
  description: How a client reaches the bouncer, beside the branch's host and a role's user name.
  returned: O(state=present)
  type: dict
  contains:
    port:
      description: The port of the branch's bouncers, 6432.
      type: int
    username_suffix:
      description: What follows the role's user name to reach this bouncer (C(|) and its name).
      type: str
      sample: "|read-pool"
resize_request:
  description: The resize request the task made (its state, sku, previous_sku, parameters...), as last read.
  returned: when the task resized the bouncer (not in check mode)
  type: dict
canceled_requests:
  description: The resize requests O(cancel_pending) canceled (in check mode, would cancel), as read before.
  returned: when the task gives O(cancel_pending=true)
  type: list
  elements: dict
  version_added: 0.3.0
restart_parameters:
  description:
    - The parameters the task changes (in check mode, would change) whose change restarts the bouncer's nodes, by
      name. Empty when none does.
  returned: when the task gives O(parameters)
  type: list
  elements: str
  version_added: 0.3.0
"""

import re

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.capacity import (
    consent_to_restart, flat_parameters, parameter_problem, parameter_text, restarting, running)
from ansible_collections.planetscale.cloud.plugins.module_utils.capacity_changes import cancel_pending, request_waiter
from ansible_collections.planetscale.cloud.plugins.module_utils.options import (
    CONNECTION, CREDENTIALS, ORGANIZATION, WAIT)
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import Outcome, Resource, capital
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import write_and_settle

PORT = 6432
NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")
# option -> the key of the resize request's body
BODY = dict(size="bouncer_size", target="target", replicas_per_cell="replicas_per_cell")


def same_text(have, want):
    try:
        return float(have) == float(want)
    except (TypeError, ValueError):
        return have == want


def parameter_values(bouncer):
    """The bouncer's parameters as {name: value}."""
    return dict((p.get("name"), p.get("value")) for p in (bouncer or {}).get("parameters") or [] if isinstance(p, dict))


class PostgresBouncer(Resource):
    """A dedicated PgBouncer of a branch, by name: created with target, size and replicas; changed in place by one
    resize request (PATCH .../resizes), waited for until completed, failing at once on canceled."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION, WAIT)
    argument_spec = dict(
        database=dict(type="str", required=True),
        branch=dict(type="str", required=True),
        name=dict(type="str", required=True),
        target=dict(type="str", choices=["primary", "replica", "replica_az_affinity"]),
        size=dict(type="str", choices=["PGB_5", "PGB_10", "PGB_20", "PGB_40", "PGB_80", "PGB_160"]),
        replicas_per_cell=dict(type="int"),
        parameters=dict(type="dict"),
        allow_restart=dict(type="bool", default=False),
        cancel_pending=dict(type="bool", default=False),
        wait_timeout=dict(type="int", default=600),
    )
    path_options = ("database", "branch", "name")
    must_exist = ("database", "branch")
    kind = "bouncer"
    key = "name"
    api_path = ("databases", "{database}", "branches", "{branch}", "bouncers")
    fields = ("target", "size", "replicas_per_cell", "parameters")
    names = ("name",)

    def __init__(self, params, ctx=None):
        super().__init__(params, ctx)
        self.request, self.restarts, self.canceled = None, [], []

    def validate(self):
        super().validate()
        if not NAME.fullmatch(self.params["name"]):
            raise ModuleFailure("name must be a bouncer name: 1 to 63 lower-case letters, digits and '-', starting "
                                "with a letter or digit; not %r." % self.params["name"])
        if self.params["replicas_per_cell"] is not None and self.params["replicas_per_cell"] < 1:
            raise ModuleFailure("replicas_per_cell must be 1 or more, not %s." % self.params["replicas_per_cell"])
        given = self.params["parameters"] or {}
        if any(isinstance(value, dict) for value in given.values()):  # {pgbouncer: {name: value}}, as branch takes
            flat = flat_parameters(given)
            other = sorted(set(name.split(".")[0] for name in flat) - {"pgbouncer"})
            if other:
                raise ModuleFailure("parameters of a bouncer are those of the namespace pgbouncer, for example "
                                    "{pgbouncer: {default_pool_size: 50}}; %s is another namespace." % other[0])
            self.params["parameters"] = given = dict((name.split(".", 1)[1], v) for name, v in flat.items())
        for name, value in given.items():
            if not name.strip() or value is None or isinstance(value, (dict, list)):
                raise ModuleFailure("parameters must map PgBouncer parameter names to values (text, numbers or "
                                    "booleans), for example {default_pool_size: 50}; %r is not such an entry." % name)

    def label(self):
        return "bouncer %r of branch %r of database %r" % (self.params["name"], self.params["branch"],
                                                           self.params["database"])

    def read(self):
        return self.client.get(self.url(self.params["name"]), missing_ok=True)

    def present(self, resource):
        if resource is not None and self.params["cancel_pending"]:
            self.canceled = cancel_pending(self, self.url(self.params["name"]), dict(resize=("resize request", "resizes")))
        return super().present(resource)

    def after_present(self, resource, changed):
        return resource, changed or bool(self.canceled)

    def managed(self, resource):
        fields = dict(target=resource.get("target"), size=(resource.get("sku") or {}).get("name"),
                      replicas_per_cell=resource.get("replicas_per_cell"))
        if self.params["parameters"] is not None:
            have = parameter_values(resource)
            fields["parameters"] = dict((name, have.get(name)) for name in self.params["parameters"])
        return fields

    def wanted(self, resource):
        fields = super().wanted(resource)
        if "parameters" in fields:
            fields["parameters"] = dict((name, parameter_text(value)) for name, value in fields["parameters"].items())
        return fields

    def same(self, name, have, want):
        if name == "parameters":
            return all(same_text((have or {}).get(key), value) for key, value in want.items())
        return have == want

    def predict(self, resource, changes):
        bouncer = dict(resource or dict(name=self.params["name"], target="primary", sku=dict(name="PGB_5"),
                                        replicas_per_cell=1, parameters=[]))
        for option, value in changes.items():
            if option == "size":
                bouncer["sku"] = dict(bouncer.get("sku") or {}, name=value)
            elif option == "parameters":
                given = dict(value)
                listed = [dict(p, value=given.pop(p.get("name"))) if p.get("name") in given else p
                          for p in bouncer.get("parameters") or []]
                bouncer["parameters"] = listed + [dict(name=name, value=v) for name, v in sorted(given.items())]
            else:
                bouncer[option] = value
        return bouncer

    def create(self, values):
        body = dict((BODY[option], value) for option, value in values.items() if option in BODY)
        return self.client.post(self.url(), json=dict(body, name=self.params["name"]))

    def guard(self, resource):
        if self.params["state"] != "present" or not self.params["parameters"]:
            return
        records = dict((p.get("name"), p) for p in resource.get("parameters") or [] if isinstance(p, dict))
        for name, value in self.params["parameters"].items():
            if records and name not in records:
                raise ModuleFailure("parameters: %s has no PgBouncer parameter %r; it has %s." % (
                    capital(self.label()), name, ", ".join(sorted(records))))
            found = parameter_problem(records[name], value) if records else None
            if found:
                raise ModuleFailure("parameters: %s %s." % (name, found))
        have = parameter_values(resource)
        differ = [name for name, value in self.params["parameters"].items()
                  if not same_text(have.get(name), parameter_text(value))]
        if not self.created:  # a bouncer this task creates serves no one yet
            self.restarts = consent_to_restart(self, restarting(records, differ), "the bouncer")

    # Resizes --------------------------------------------------------------------------------

    def resizes(self):
        return self.client.paginate(self.url(self.params["name"], "resizes"), limit=5)

    def running(self):
        return running(self.resizes())

    def update(self, resource, changes):
        running = self.running()
        if running is not None and self.params["wait"]:
            self.waiter(running, foreign=True).wait(lambda: self.find(running["id"]), self.params["wait_timeout"],
                                                    current=running)
            resource = self.read_record() or resource
            changes = self.differences(resource)
            if not changes:
                return Outcome(resource, False)
        self.guard(resource)
        body = dict((BODY[option], value) for option, value in changes.items() if option in BODY)
        if "parameters" in changes:
            body["parameters"] = dict(pgbouncer=changes["parameters"])

        def asked(error):  # pylint: disable=unused-argument
            """After a lost answer or a refusal: the request it made, running, or (the bouncer has it all) ended."""
            found = self.running()
            if found is not None:
                return found, True
            bouncer = self.read_record()
            return (next(iter(self.resizes()), None), True) if bouncer and not self.differences(bouncer) else None
        self.request = write_and_settle(lambda: self.client.patch(self.url(self.params["name"], "resizes"),
                                                                  json=body), read_back=asked, on_conflict=asked)[0]
        if not self.params["wait"]:
            return self.predict(resource, changes)
        if self.request is None:
            return self.read_record() or self.predict(resource, changes)
        self.request = self.waiter(self.request).wait(lambda: self.find(self.request["id"]),
                                                      self.params["wait_timeout"], current=self.request, changed=True)
        return self.read_record() or self.predict(resource, changes)

    def find(self, request_id):
        return next((r for r in self.resizes() if r.get("id") == request_id), None)

    def waiter(self, request, foreign=False):
        what = "resize request %r of %s" % (request.get("id"), self.label())
        return request_waiter(what, "bouncer", foreign, key="resize_request")

    def result_keys(self, resource):
        keys = dict(bouncer=resource, connection=dict(port=PORT, username_suffix="|" + self.params["name"]))
        if self.request is not None:
            keys["resize_request"] = self.request
        if self.params["parameters"] is not None:
            keys["restart_parameters"] = self.restarts
        if self.params["cancel_pending"]:
            keys["canceled_requests"] = self.canceled
        return keys


def main():
    run_module(PostgresBouncer)


if __name__ == "__main__":
    main()
