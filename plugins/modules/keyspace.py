#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: keyspace
short_description: Create, resize and delete the keyspaces of a branch
version_added: 0.3.0
description:
  - Ensures that a branch of a MySQL (Vitess) database has a keyspace, with its shards, its cluster size and its extra
    replicas, or that it has none.
  - A new keyspace is created with O(shards), O(cluster_size) and O(extra_replicas); by default the task then waits
    until it is ready (its record says so, or else its rollout status is C(complete)).
  - An existing keyspace of another O(cluster_size) or O(extra_replicas) is resized in place by one resize request,
    waited for until it completes (O(wait), O(wait_timeout)); a resize request that ends V(canceled) fails the task,
    naming the state. A resize request still running when the task starts (made elsewhere, for example in the web
    console) is waited for first; with O(wait=false) the task fails instead and says so.
  - What a keyspace has is what its record states, else what its newest completed resize request asked for. The
    platform's keyspace records may state neither (a keyspace never resized); a value that is unknown so is not
    compared, and the task warns that it is not.
  - O(shards) can only be chosen when the keyspace is created; another number on an existing keyspace fails the task
    and names it.
  - The branch's default keyspace (named after the database) lives as long as the branch; the task refuses to delete
    it, also in check mode.
  - O(replication_durability_strategy) and O(vreplication_flags) are the keyspace's settings, changed by one update
    (PATCH) when they differ from what the keyspace's record states. The platform's keyspace records may state neither
    (lean records). A setting the record does not state is sent, and the task reports a change and warns that it
    could not tell. An update whose answer is lost and whose record does not state the settings is not sent again;
    the task fails and says so.
  - To route the rows of a sharded keyspace, give it a VSchema with M(planetscale.cloud.vschema).
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the database, a MySQL (Vitess) database.
    type: str
    required: true
  branch:
    description: The name of the branch.
    type: str
    required: true
  name:
    description: The name of the keyspace.
    type: str
    required: true
  state:
    description:
      - V(present) creates the keyspace if it does not exist, and resizes it if it has another size.
      - V(absent) deletes the keyspace with its tables and rows; a keyspace that does not exist is not a change.
    type: str
    choices: [present, absent]
    default: present
  shards:
    description:
      - The number of shards of a new keyspace, 1 or more; the platform's default is 1 (an unsharded keyspace).
      - Compared with an existing keyspace, which keeps its shards; a different number fails the task.
    type: int
  cluster_size:
    description:
      - The cluster size of each shard, a MySQL size M(planetscale.cloud.cluster_size_info) lists, for example
        V(PS_10) or V(PS_20). V(SIZE_10), an older spelling, is V(PS_10).
      - Required to create a keyspace. An existing keyspace of another size is resized.
      - A size the organization may not use fails the task before any write, also in check mode, naming those it may.
    type: str
  extra_replicas:
    description:
      - The replicas of each shard beyond those the cluster size includes, 0 or more.
      - A new keyspace is created with them; an existing keyspace with another number is resized.
    type: int
  cancel_pending:
    description:
      - Cancel the resize request of the keyspace that has not started resizing (state V(queued) or V(pending)), made
        elsewhere or by a task with O(wait=false). A keyspace with none is not a change. O(cluster_size) and
        O(extra_replicas) are compared and sent after it.
      - A request already resizing cannot be canceled; with none to cancel beside it, the task fails and says so.
    type: bool
    default: false
  replication_durability_strategy:
    description:
      - The keyspace's replication durability strategy (C(replication_durability_constraints.strategy)).
      - The platform's answer to the update may name another strategy (V(maximum)); the result shows what was sent.
    type: str
    choices: [available, lag, always]
    version_added: 0.3.0
  vreplication_flags:
    description:
      - The keyspace's VReplication flags; only those given are compared and sent.
    type: dict
    version_added: 0.3.0
    suboptions:
      optimize_inserts:
        description: Optimize inserts.
        type: bool
      allow_no_blob_binlog_row_image:
        description: Allow the binary log's row image without blobs (C(binlog_row_image=noblob)).
        type: bool
      vplayer_batching:
        description: Batch the VPlayer's statements.
        type: bool
  wait:
    description:
      - Wait until a new keyspace is ready, and until each resize request the task makes completes. V(false) returns
        the resize request as it is (RV(resize_requests)), and refuses to start while one made elsewhere is running.
  wait_timeout:
    description:
      - Seconds to wait for the keyspace to be ready, and for each resize request to complete. The task fails after
        that, with the last state.
    default: 1200
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.api.wait
  - planetscale.cloud.attributes.resource
seealso:
  - module: planetscale.cloud.keyspace_info
  - module: planetscale.cloud.vschema
  - module: planetscale.cloud.cluster_size_info
"""

EXAMPLES = r"""
- name: A sharded keyspace of two shards beside the default one, waited for until it is ready
  planetscale.cloud.keyspace:
    organization: acme
    database: app
    branch: main
    name: sharded
    shards: 2
    cluster_size: PS_10

- name: Give each of its shards a larger cluster and one more replica (one resize request, waited for)
  planetscale.cloud.keyspace:
    organization: acme
    database: app
    branch: main
    name: sharded
    cluster_size: PS_20
    extra_replicas: 1

- name: Its durability strategy and one VReplication flag (one update, when they differ)
  planetscale.cloud.keyspace:
    organization: acme
    database: app
    branch: main
    name: sharded
    replication_durability_strategy: lag
    vreplication_flags:
      vplayer_batching: true

- name: Delete it
  planetscale.cloud.keyspace:
    organization: acme
    database: app
    branch: main
    name: sharded
    state: absent
"""

RETURN = r"""
keyspace:
  description:
    - The keyspace, as the platform answers it. In check mode, when it would be created, the fields known before.
    - The platform's records may carry only C(id), C(name), C(shards), C(sharded) and their times.
    - After an update of its settings, the settings sent (the platform's answer may name another strategy).
  returned: O(state=present)
  type: dict
  contains:
    id:
      description: The ID of the keyspace.
      type: str
    name:
      description: The name of the keyspace.
      type: str
    shards:
      description: The number of shards.
      type: int
    sharded:
      description: Whether the keyspace is sharded.
      type: bool
    cluster_name:
      description: The cluster size of each shard (from C(cluster_rate_name) where the platform's record names it so).
      type: str
    extra_replicas:
      description: The replicas of each shard beyond those the cluster size includes.
      type: int
    ready:
      description: Whether it serves queries; when the task waited and the record did not say, from its rollout status.
      type: bool
    default:
      description: Whether it is the branch's default keyspace.
      type: bool
capacity:
  description:
    - O(cluster_size) and O(extra_replicas) as the task gave them, as the keyspace has them after the task (in check
      mode, as it would have them). A value the platform does not state is left out.
  returned: when the task gives either
  type: dict
  sample: {"cluster_size": "PS_20", "extra_replicas": 1}
resize_requests:
  description:
    - The resize requests the task made, as last read (C(completed) when the task waited), each the platform's record
      (C(id), C(state), C(cluster_name), C(extra_replicas), C(replicas) and their C(previous_) ones). Empty when
      nothing differed, and in check mode.
  returned: O(state=present)
  type: list
  elements: dict
canceled_requests:
  description: The resize requests O(cancel_pending) canceled (in check mode, would cancel), each as read before.
  returned: when the task sets O(cancel_pending)
  type: list
  elements: dict
rollout_status:
  description:
    - The keyspace's rollout status as last read while waiting for it to be ready (C(state), and C(shards) each with
      its C(name), such as V(-80) and V(80-), and C(state)).
  returned: when the task read it
  type: dict
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.branches import (
    check_cluster_size, cluster_size, first, listed_size, other_size, with_cluster_name)
from ansible_collections.planetscale.cloud.plugins.module_utils.capacity import running
from ansible_collections.planetscale.cloud.plugins.module_utils.capacity_changes import CapacityChanges, cancel_pending
from ansible_collections.planetscale.cloud.plugins.module_utils.options import (
    CONNECTION, CREDENTIALS, ORGANIZATION, WAIT)
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import Resource, capital
from ansible_collections.planetscale.cloud.plugins.module_utils.settle import Waiter

KINDS = dict(resize=("resize request", "resizes"))  # the request in sentences, the path segment of their list
CAPACITY = ("cluster_size", "extra_replicas")  # what a resize request changes, by the options' names
UNKNOWN = ("%s states no %s and has no completed resize request that tells it, so %s is not compared and nothing is "
           "sent for it.")
# The settings PATCH .../keyspaces/{name} changes: option -> key of the record and of the body
SETTINGS = dict(replication_durability_strategy="replication_durability_constraints",
                vreplication_flags="vreplication_flags")
UNSTATED = ("%s does not state its %s, so the task cannot tell whether it already has the value given: it sends it and "
            "reports a change.")
LOST = ("The answer to the update of %s was lost and its record does not state %s, so the task cannot tell whether it "
        "was applied; nothing was sent again. Run the task again: sending the same settings again is harmless.")
DEFAULT = ("%s is the default keyspace of the branch, which keeps it as long as it exists: delete the branch to "
           "remove it.")


class KeyspaceCapacity(CapacityChanges):
    """The cluster size and extra replicas a task gives for an existing keyspace: what it has (its record, else its
    newest completed resize request), changed by one resize request (PUT .../resizes) that is waited for."""

    kinds = KINDS

    def __init__(self, module):
        super().__init__(module)
        self.want = dict((name, self.params[name]) for name in CAPACITY if self.params[name] is not None)
        self.unknown = set()  # what was warned about, once

    def read(self, resource):
        found, done = None, {}
        for index, request in enumerate(self.client.paginate(self.url() + "/resizes")):
            found = running([request]) if index == 0 else found  # only the newest can be running
            if request.get("state") == "completed":
                done = request
                break
        self.have = dict(cluster_size=first(cluster_size(resource), cluster_size(done)),
                         extra_replicas=first(resource.get("extra_replicas"), done.get("extra_replicas")))
        for name in self.want:
            if self.have[name] is None and name not in self.unknown:
                self.unknown.add(name)
                self.module.ctx.warn(UNKNOWN % (capital(self.module.label()), name.replace("_", " "), name))
        return dict(resize=found) if found else {}

    def changes(self):
        changes = {}
        if "cluster_size" in self.want and other_size(self.have["cluster_size"], self.want["cluster_size"]):
            changes["cluster_size"] = self.want["cluster_size"]
        if "extra_replicas" in self.want and self.have["extra_replicas"] not in (None, self.want["extra_replicas"]):
            changes["extra_replicas"] = self.want["extra_replicas"]
        return changes

    def writes(self, changes):
        return [("resize", "PUT", "resizes", dict(changes))]


class Keyspace(Resource):
    """A keyspace of a branch, by name: created with its shards, cluster size and extra replicas; resized in place
    (KeyspaceCapacity); deleted, except the branch's default keyspace."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION, WAIT)
    argument_spec = dict(
        database=dict(type="str", required=True),
        branch=dict(type="str", required=True),
        name=dict(type="str", required=True),
        shards=dict(type="int"),
        cluster_size=dict(type="str"),
        extra_replicas=dict(type="int"),
        cancel_pending=dict(type="bool", default=False),
        replication_durability_strategy=dict(type="str", choices=["available", "lag", "always"]),
        vreplication_flags=dict(type="dict", options=dict(
            optimize_inserts=dict(type="bool"), allow_no_blob_binlog_row_image=dict(type="bool"),
            vplayer_batching=dict(type="bool"))),
        wait_timeout=dict(type="int", default=1200),
    )
    path_options = ("database", "branch", "name")
    must_exist = ("database", "branch")
    names = ("name",)
    kind = "keyspace"
    api_path = ("databases", "{database}", "branches", "{branch}", "keyspaces")
    key = "name"
    fields = ("name", "shards") + tuple(SETTINGS)
    create_only = ("shards",)
    required_to_create = ("cluster_size",)
    parent = "branch"

    capacity = None  # the cluster size and extra replicas of an existing keyspace (KeyspaceCapacity), when given
    canceled = ()  # the requests cancel_pending canceled, as read before
    rollout = None  # the rollout status, when the wait for readiness read it
    size = None  # the cluster size of a new keyspace, as the platform lists it
    sent = None  # the settings an update sent: a record that does not state them cannot tell its outcome

    def validate(self):
        super().validate()
        for name, least in (("shards", 1), ("extra_replicas", 0)):
            if self.params[name] is not None and self.params[name] < least:
                raise ModuleFailure("%s must be %d or more, not %d." % (name, least, self.params[name]))
        check_cluster_size(self.params["cluster_size"])

    def label(self):
        return "keyspace %r of branch %r of database %r" % (self.params["name"], self.params["branch"],
                                                            self.params["database"])

    def read(self):
        return with_cluster_name(self.client.get(self.url(self.params["name"]), missing_ok=True))

    def present(self, resource):
        if resource is None and self.params["cluster_size"] is not None:
            self.size = listed_size(self, self.params["cluster_size"], "mysql")
        elif resource is not None and any(self.params[name] is not None for name in CAPACITY):
            self.capacity = KeyspaceCapacity(self)
            self.capacity.runs = self.capacity.read(resource)
            if "cluster_size" in self.capacity.changes():  # a size it would resize to is one the organization has
                self.capacity.want["cluster_size"] = listed_size(self, self.params["cluster_size"], "mysql")
        if resource is not None and self.params["cancel_pending"]:
            self.canceled = cancel_pending(self, self.url(self.params["name"]), KINDS)
            if self.capacity is not None:
                self.capacity.runs = dict((k, r) for k, r in self.capacity.runs.items() if r not in self.canceled)
        return super().present(resource)

    def managed(self, resource):
        fields = dict(name=resource.get("name"), shards=resource.get("shards"))
        fields.update(settings(resource, self.wanted(resource)))
        have = self.capacity.have if self.capacity is not None else dict(  # else new: it has what it was created with
            cluster_size=first(cluster_size(resource), self.size),
            extra_replicas=first(resource.get("extra_replicas"), self.params["extra_replicas"]))
        fields.update((name, have.get(name)) for name in CAPACITY if self.params[name] is not None)
        return fields

    def wanted(self, resource):
        wanted = super().wanted(resource)
        flags = dict((name, value) for name, value in (wanted.pop("vreplication_flags", None) or {}).items()
                     if value is not None)
        return dict(wanted, vreplication_flags=flags) if flags else wanted

    def differences(self, resource):
        changes = super().differences(resource)
        unstated = [name for name, key in SETTINGS.items() if name in changes and key not in resource]
        if unstated and self.sent is not None:
            raise ModuleFailure(LOST % (self.label(), " and ".join(unstated)))
        for name in unstated:
            self.ctx.warn(UNSTATED % (capital(self.label()), name))
        return changes

    def update(self, resource, changes):
        """The settings, in one PATCH; the answer with the settings sent (its strategy may be another)."""
        self.sent = changes
        answer = self.client.patch(self.url(resource["name"]), json=sent(changes))
        return self.predict(with_cluster_name(dict(resource, **answer)), changes)

    def predict(self, resource, changes):
        if resource is not None:  # only the settings change in place (shards are create-only)
            return dict(resource, **dict((key, dict(resource.get(key) or {}, **value))
                                         for key, value in sent(changes).items()))
        shards = self.params["shards"] or 1
        keyspace = dict(name=self.params["name"], shards=shards, sharded=shards > 1, cluster_name=self.size,
                        ready=False, default=False)
        if self.params["extra_replicas"] is not None:
            keyspace["extra_replicas"] = self.params["extra_replicas"]
        return keyspace

    def create(self, values):
        body = dict(name=self.params["name"], cluster_size=self.size)
        body.update((name, self.params[name]) for name in ("shards", "extra_replicas") if self.params[name] is not None)
        return with_cluster_name(self.client.post(self.url(), json=body))

    def guard(self, resource):
        default = resource.get("default") or resource.get("name") == self.params["database"]
        if self.params["state"] == "absent" and default:
            raise ModuleFailure(DEFAULT % capital(self.label()))

    def after_present(self, resource, changed):
        changed = changed or bool(self.canceled)
        if self.capacity is not None:
            resource, resized = self.capacity.apply(resource, self.capacity.runs)
            changed = changed or resized
        if not self.params["wait"] or self.ctx.check_mode or resource.get("ready") or (
                resource.get("ready") is None and not changed):
            return resource, changed

        def state(record):
            return (self.rollout or {}).get("state") or ("ready" if record["ready"] else "not ready")
        gone = "%s was deleted while waiting for it to be ready." % capital(self.label())
        waiter = Waiter("%s to be ready" % self.label(), done=lambda record: record["ready"], state=state,
                        failed=lambda record: None if record else gone, key="keyspace")
        waited = waiter.wait(self.readiness, self.params["wait_timeout"], changed=changed)
        return self.predict(waited, self.sent or {}), changed  # the settings sent, which lean records do not state

    def readiness(self):
        """The keyspace, with ready from its rollout status (state complete) where its record does not say."""
        keyspace = self.read()
        if keyspace is not None and keyspace.get("ready") is None:
            self.rollout = self.client.get(self.url(self.params["name"], "rollout-status"), missing_ok=True) or {}
            keyspace["ready"] = self.rollout.get("state") == "complete"
        return keyspace

    def result_keys(self, resource):
        keys = dict(keyspace=resource, resize_requests=self.capacity.requests if self.capacity is not None else [])
        if self.capacity is not None:
            keys["capacity"] = self.capacity.view(dict((k, v) for k, v in self.capacity.have.items() if v is not None))
        elif any(self.params[name] is not None for name in CAPACITY):
            keys["capacity"] = dict((name, self.size if name == "cluster_size" else self.params[name])
                                    for name in CAPACITY if self.params[name] is not None)
        if self.params["cancel_pending"]:
            keys["canceled_requests"] = list(self.canceled)
        if self.rollout is not None:
            keys["rollout_status"] = self.rollout
        return keys


def sent(changes):
    """The body of the update of the settings changes holds."""
    return dict((key, dict(strategy=changes[name]) if name == "replication_durability_strategy" else changes[name])
                for name, key in SETTINGS.items() if name in changes)


def settings(resource, wanted):
    """The settings given that a keyspace record states, in the options' form; None where it does not state them."""
    strategy, flags = (resource.get("replication_durability_constraints") or {}).get("strategy"), resource.get(
        "vreplication_flags")
    stated = dict(replication_durability_strategy=strategy, vreplication_flags=None if flags is None else dict(
        (name, flags.get(name)) for name in wanted.get("vreplication_flags", ())))
    return dict((name, value) for name, value in stated.items() if name in wanted)


def main():
    run_module(Keyspace)


if __name__ == "__main__":
    main()
