#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: deploy_request
short_description: Open, deploy and close deploy requests (schema changes)
version_added: 0.2.0
description:
  - Drives a deploy request, the platform's non-blocking schema change from a development branch into a production
    branch, to the state asked for, and waits for it with growing intervals.
  - The request is the one numbered O(number), or the open one from O(branch) into O(into_branch), which is
    created when there is none. When the newest request between them was deployed and the branch's schema has not
    changed since, that request is the one, so a second run opens nothing new.
  - A request that fails (its deploy check finds lint errors, the deploy fails, is cancelled or reverted by someone
    else) ends the task at once, with a sentence that names the state and lists each lint error (table, error,
    link to the docs) or the deploy error.
  - A request with no schema changes is a success with RV(status=no_changes), and RV(msg) says so. When the task has
    just opened it, that is a change (RV(ignore:changed=true)), since others see the open request; it stays open, as
    the platform leaves it, and a second run finds it and writes nothing.
author:
  - planetscale.cloud contributors (@planetscale-ansible)
options:
  database:
    description: The name of the database.
    type: str
    required: true
  number:
    description: The number of the deploy request. Without it, O(branch) says which request it is.
    type: int
  branch:
    description: The development branch the schema change is made on. Required without O(number).
    type: str
  into_branch:
    description:
      - The production branch to deploy into. By default the database's default branch (V(main) where the
        credentials cannot read the database).
    type: str
  state:
    description:
      - V(open) ensures the request exists and, with O(wait), waits until its deploy check has finished, so that it is
        deployable or has no changes.
      - V(deployed) also queues the deploy (unless it is already queued or deployed) and waits until the schema is
        live on O(into_branch) (V(complete_pending_revert) or V(complete)), or a gated deploy waits for its cutover
        (V(pending_cutover)). A deployed request is not deployed again; one whose deploy was cancelled before the task
        began (V(cancelled), V(complete_cancel)) is, as the platform allows.
      - The wait ends only there, or at once in a state from which the deploy cannot succeed. Any other state, or an
        answer without a deployment state (a read may lag behind the deploy), keeps it waiting until O(wait_timeout);
        a deployment state the collection does not know fails the task with a sentence that names it.
      - V(closed) closes the request without deploying it; a closed or missing request is not a change.
      - V(cancelled) cancels the request's deploy while it is queued or running, up to a gated deploy waiting in
        V(pending_cutover) (POST C(cancel)), and with O(wait) waits until it has stopped. A deploy already cancelled is
        not a change, nor is a request with no deploy queued or running (RV(msg) says so), nor a missing one. A deploy
        that is cutting over (V(in_progress_cutover)) or live can no longer be cancelled, and the task fails, saying
        to revert it within its revert window. The request stays open, and can be deployed again.
    type: str
    choices: [open, deployed, closed, cancelled]
    default: open
  notes:
    description:
      - Notes for a new request. They can only be set when the request is created; other notes on an existing
        request fail the task.
    type: str
  auto_cutover:
    description:
      - Whether the deploy cuts over to the new schema by itself as soon as it is ready. With V(false) the deploy is
        gated and waits in V(pending_cutover) for O(cutover). Changed on an open request until it is cut over.
    type: bool
  auto_delete_branch:
    description: Whether the platform deletes O(branch) once the deploy completes. Changed on an open request.
    type: bool
  instant_ddl:
    description: Deploy with instant DDL where the change allows it. With O(state=deployed) only.
    type: bool
  cutover:
    description:
      - Apply a gated deploy that waits in V(pending_cutover) (O(state=deployed) only).
      - Without it such a task does not wait for the cutover, which only a person or another task can give. It
        returns once the deploy reaches V(pending_cutover), with RV(status=awaiting_cutover) and RV(msg) saying so,
        and skips O(revert_window); run it again with O(cutover=true) to finish the deploy.
    type: bool
    default: false
  force_cutover:
    description:
      - Force the cutover of a deploy that is cutting over (V(in_progress_cutover)) (O(state=deployed) only). The
        platform ends the queries and transactions that hold the locks of the changed tables, and the cutover goes on.
        A long transaction can otherwise keep a cutover waiting there; without this option the task never forces one,
        and a wait that times out there says so.
      - Asked once per deploy (a deploy whose C(deployment.force_cutover_requested_at) is set is not forced again),
        and only once the deploy is cutting over. It does not start a gated deploy's cutover, which O(cutover) does.
    type: bool
    default: false
    version_added: 0.3.0
  complete_errored:
    description:
      - Complete a deploy that ended in V(complete_error) (POST C(complete-deploy)), where the platform allows it,
        rather than failing the task (O(state=deployed) only); the task then waits for V(complete). The platform's
        refusal is the task's sentence. A deploy check that failed (V(error)) is not completed.
    type: bool
    default: false
    version_added: 0.3.0
  throttle_ratio:
    description:
      - How much the platform throttles the deploy's schema migrations, in every keyspace they change (0 to 95; V(0)
        does not throttle them, V(95) slows them most), through the request's throttler (GET and PATCH C(throttler)).
      - Compared with the ratio the throttler has in each keyspace, and set on an open request until its deploy is
        live. Not with O(state=closed) or O(state=cancelled).
    type: int
    version_added: 0.3.0
  revert_window:
    description:
      - What to do with the revert window that follows a deploy (O(state=deployed) only).
      - V(keep) leaves it open; the task ends at V(complete_pending_revert).
      - V(skip) ends it at once (V(complete)), after which the change can no longer be reverted.
      - V(revert) reverts the change within the window (V(complete_revert)), keeping the data written since. After
        the window has ended the task fails.
    type: str
    choices: [keep, skip, revert]
    default: keep
  wait:
    description:
      - Wait for each step to finish. With V(false) the task returns once its write is sent, and O(cutover) and
        O(revert_window) act only on a request already in V(pending_cutover) or in its revert window.
      - O(state=deployed) waits for the deploy check in any case, since a request is only queued after it.
  wait_timeout:
    description: Seconds to wait in all. The task fails after that with the request's last state.
    default: 1800
extends_documentation_fragment:
  - planetscale.cloud.api
  - planetscale.cloud.api.connection
  - planetscale.cloud.api.organization
  - planetscale.cloud.api.wait
  - planetscale.cloud.attributes.resource
notes:
  - Check mode predicts the states the request would reach, without writing or waiting. The diff shows the request's
    RV(deploy_request.state) and RV(deploy_request.deployment_state) before and after, and the settings the task gives.
  - A write whose answer is lost is read back rather than sent again, so a request is not created twice and a
    deploy is not queued twice. The platform answers a cancel, a force cutover and a completed deploy with the
    deployment's state alone; the request is then read.
  - Before a deploy is queued, the platform's storage check is read (GET C(storage-check)), also in check mode. When
    it says the branch deployed into would run out of storage (C(enough_storage) false), the task fails before the
    deploy with the bytes needed, each shard short of them and whether the cluster can be upgraded.
seealso:
  - module: planetscale.cloud.deploy_request_info
  - plugin: planetscale.cloud.deploy_request_status
    plugin_type: filter
"""

EXAMPLES = r"""
- name: Open a deploy request from add-orders into main and wait until it is deployable
  planetscale.cloud.deploy_request:
    organization: acme
    database: app
    branch: add-orders
    notes: Adds the orders table
  register: opened

- name: Deploy it, skip the revert window, and delete the branch afterwards
  planetscale.cloud.deploy_request:
    organization: acme
    database: app
    number: "{{ opened.deploy_request.number }}"
    state: deployed
    revert_window: skip
    auto_delete_branch: true

- name: Deploy a gated change; the task returns when the deploy waits for its cutover
  planetscale.cloud.deploy_request:
    organization: acme
    database: app
    branch: add-invoices
    state: deployed
    auto_cutover: false
  register: staged

- name: Cut over at a quiet hour
  planetscale.cloud.deploy_request:
    organization: acme
    database: app
    number: "{{ staged.deploy_request.number }}"
    state: deployed
    cutover: true
  when: staged.status == 'awaiting_cutover'

- name: Revert it within the revert window
  planetscale.cloud.deploy_request:
    organization: acme
    database: app
    number: "{{ staged.deploy_request.number }}"
    state: deployed
    revert_window: revert

- name: Deploy add-audit gently; force its cutover should a long transaction hold it
  planetscale.cloud.deploy_request:
    organization: acme
    database: app
    branch: add-audit
    state: deployed
    throttle_ratio: 60
    force_cutover: true
    complete_errored: true
  register: gentle

- name: Queue a gated deploy of add-archive, without waiting
  planetscale.cloud.deploy_request:
    organization: acme
    database: app
    branch: add-archive
    state: deployed
    auto_cutover: false
    wait: false

- name: Cancel its deploy, queued, running or waiting for its cutover
  planetscale.cloud.deploy_request:
    organization: acme
    database: app
    branch: add-archive
    state: cancelled
"""

RETURN = r"""
deploy_request:
  description:
    - The deploy request, with its deployment. In check mode, as predicted (a new one has no number).
  returned: when the request exists or would be created
  type: dict
  contains:
    number:
      description: The number of the request.
      type: int
      sample: 7
    branch:
      description: The branch it deploys from.
      type: str
    into_branch:
      description: The branch it deploys into.
      type: str
    state:
      description: V(open) or V(closed).
      type: str
    deployment_state:
      description: One of the 20 deployment states, such as V(ready), V(pending_cutover) or V(complete).
      type: str
      sample: complete_pending_revert
    approved:
      description: Whether the request is approved.
      type: bool
    notes:
      description: The notes of the request.
      type: str
    html_url:
      description: The request in the web application.
      type: str
    deployment:
      description: The deployment (state, deployable, auto_cutover, auto_delete_branch, lint_errors,
        deploy_operations, timestamps).
      type: dict
    throttler:
      description: The request's throttler (keyspaces, configurations with each keyspace's ratio), as read or set;
        in check mode as predicted (for a request to open, the C(ratio) it would be given).
      returned: with O(throttle_ratio), while the request's settings can change
      type: dict
      version_added: 0.3.0
status:
  description: What the request's state means to a person, as the filter planetscale.cloud.deploy_request_status gives
    it (V(pending), V(deployable), V(blocked), V(no_changes), V(deploying), V(awaiting_cutover), V(revertable),
    V(complete), V(failed) or V(cancelled)).
  returned: when the request exists or would be created; on a failure of the wait, the last state's
  type: str
  sample: revertable
storage_check:
  description: The platform's storage check, read before the deploy was queued (enough_storage, upgradeable,
    storage_bytes_needed, storage_report by keyspace and shard).
  returned: when the task queued a deploy, or would in check mode; also in the failure it causes
  type: dict
  sample: {"enough_storage": true, "upgradeable": true, "storage_bytes_needed": 1048576, "storage_report": {}}
  version_added: 0.3.0
msg:
  description: Why the task stopped short of a deploy, when the request has no changes or awaits its cutover; with
    O(state=cancelled), that there was nothing to cancel.
  returned: when the request has no changes, a gated deploy waits for O(cutover), or nothing was cancelled
  type: str
"""

import time

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.deploy_machine import (
    DEPLOYED, DeployMachine, uniform_ratio)
from ansible_collections.planetscale.cloud.plugins.module_utils.deploy_requests import (
    DEPLOYING, deployment_state, read_deploy_request, status)
from ansible_collections.planetscale.cloud.plugins.module_utils.options import (
    CONNECTION, CREDENTIALS, ORGANIZATION, WAIT)
from ansible_collections.planetscale.cloud.plugins.module_utils.resource import capital
from ansible_collections.planetscale.cloud.plugins.module_utils.timestamps import parse_iso8601


def covered_until(request):
    """The latest time a deploy request is known to cover the branch's schema: created, queued or deployed."""
    deployment = request.get("deployment") or {}
    times = [parse_iso8601(value) for value in (request.get("created_at"), request.get("deployed_at"),
                                                deployment.get("queued_at"))]
    times = [moment for moment in times if moment is not None]
    return max(times) if times else None


class DeployRequest(DeployMachine):
    """Find or create the deploy request, then the deploy, each write settled."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION, WAIT)
    argument_spec = dict(
        database=dict(type="str", required=True),
        number=dict(type="int"),
        branch=dict(type="str"),
        into_branch=dict(type="str"),
        state=dict(type="str", choices=["open", "deployed", "closed", "cancelled"], default="open"),
        notes=dict(type="str"),
        auto_cutover=dict(type="bool"),
        auto_delete_branch=dict(type="bool"),
        instant_ddl=dict(type="bool"),
        cutover=dict(type="bool", default=False),
        force_cutover=dict(type="bool", default=False),
        complete_errored=dict(type="bool", default=False),
        throttle_ratio=dict(type="int"),
        revert_window=dict(type="str", choices=["keep", "skip", "revert"], default="keep"),
        wait_timeout=dict(type="int", default=1800),
    )
    path_options = ("database", "branch", "into_branch")

    # Options that act on an open or deployed request, refused with state=closed and cancelled; the flags among them;
    # and those that also act with state=open.
    NOT_FOR_CLOSING = ("notes", "auto_cutover", "auto_delete_branch", "throttle_ratio", "instant_ddl")
    FLAGS = ("cutover", "force_cutover", "complete_errored")
    FOR_OPENING = ("notes", "auto_cutover", "auto_delete_branch", "throttle_ratio")
    ONLY = dict(closed="closes the deploy request", cancelled="cancels the deploy of the deploy request")

    def validate(self):
        super().validate()
        params, state = self.params, self.params["state"]
        if params["number"] is not None and params["number"] < 1:
            raise ModuleFailure("number must be 1 or more, not %s." % params["number"])
        if params["number"] is None and params["branch"] is None:
            raise ModuleFailure("Give number (to name a deploy request) or branch (the branch to deploy from), to say "
                                "which deploy request this is.")
        if params["throttle_ratio"] is not None and not 0 <= params["throttle_ratio"] <= 95:
            raise ModuleFailure("throttle_ratio must be 0 to 95, not %s." % params["throttle_ratio"])
        given = [name for name in self.NOT_FOR_CLOSING if params[name] is not None]
        given += [name for name in self.FLAGS if params[name]]
        given += ["revert_window=%s" % params["revert_window"]] if params["revert_window"] != "keep" else []
        if state in self.ONLY and given:
            raise ModuleFailure("%s cannot be used with state=%s, which only %s: leave %s out." % (
                ", ".join(given), state, self.ONLY[state], "it" if len(given) == 1 else "them"))
        deploying = [name for name in given if name not in self.FOR_OPENING]
        if state == "open" and deploying:
            raise ModuleFailure("%s only act%s with state=deployed: set state to deployed, or leave %s out." % (
                ", ".join(deploying), "s" if len(deploying) == 1 else "", "it" if len(deploying) == 1 else "them"))

    # Which deploy request -----------------------------------------------------------------------

    def find(self):
        """The deploy request named by number, or the one from branch into into_branch that the task is about."""
        if self.params["number"] is not None:
            request = read_deploy_request(self, self.params["number"])  # a missing database fails here
            if request is None:
                raise ModuleFailure("%s does not exist; leave number out and give branch to open one." % capital(
                    self.label()))
            for name in ("branch", "into_branch"):
                if self.params[name] is not None and self.params[name] != request.get(name):
                    raise ModuleFailure("%s has %s %r, not %r: leave %s out, or give the number of another deploy "
                                        "request." % (capital(self.label(request)), name, request.get(name),
                                                      self.params[name], name))
            return request
        listed = self.listed()
        request = next((request for request in listed if request.get("state") == "open"), None)
        if request is None and listed and self.params["state"] != "closed" and self.still_deployed(listed[0]):
            request = listed[0]
        if request is not None and not isinstance(request.get("deployment"), dict):
            request = self.read(request["number"]) or request  # a list may leave the deployment out
        return request

    def still_deployed(self, latest):
        """Whether the newest (closed) request was deployed and the branch's schema has not changed since: then it is
        the request a second run of the task is about, and no new one is opened."""
        if deployment_state(latest) not in DEPLOYED | DEPLOYING | frozenset(("pending_cutover",)):
            return False
        branch = self.client.get(self.org_path("databases", self.params["database"], "branches",
                                               self.params["branch"]), missing_ok=True)
        changed_at = parse_iso8601((branch or {}).get("schema_last_updated_at"))
        covered = covered_until(latest)
        return changed_at is None or covered is None or changed_at <= covered

    # The task -----------------------------------------------------------------------------------

    def run(self):
        self.deadline = time.monotonic() + self.params["wait_timeout"]
        self.writes = []
        request = self.throttled(self.find())
        before = self.view(request)
        if self.params["state"] == "closed":
            request = self.close(request)
        elif self.params["state"] == "cancelled":
            request = self.cancel(request)
        else:
            request = self.ensure(request)
            request = self.check(request) if self.params["state"] == "open" else self.deploy(request)
        result = dict(changed=self.is_changed())
        if request is not None:
            result.update(deploy_request=request, status=status(request))
        if self.storage is not None:
            result["storage_check"] = self.storage
        if self.message:
            result["msg"] = self.message
        if self.ctx.diff:
            result["diff"] = dict(before=before, after=self.view(request))
        return result

    def view(self, request):
        """What the diff shows of a deploy request: its states, and the settings the task gives."""
        if request is None:
            return {}
        shown = dict(state=request.get("state"), deployment_state=deployment_state(request))
        shown.update((name, (request.get("deployment") or {}).get(name)) for name in self.SETTINGS
                     if self.params.get(name) is not None)
        if self.params["throttle_ratio"] is not None:
            throttler = request.get("throttler") or {}
            shown["throttle_ratio"] = throttler.get("ratio") if "configurations" not in throttler else uniform_ratio(
                throttler)
        return shown


def main():
    run_module(DeployRequest)


if __name__ == "__main__":
    main()
