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
        (V(pending_cutover)). A deployed request is not deployed again.
      - The wait ends only there, or at once in a state from which the deploy cannot succeed. Any other state, or an
        answer without a deployment state (a read may lag behind the deploy), keeps it waiting until O(wait_timeout);
        a deployment state the collection does not know fails the task with a sentence that names it.
      - V(closed) closes the request without deploying it; a closed or missing request is not a change.
    type: str
    choices: [open, deployed, closed]
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
    deploy is not queued twice.
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
status:
  description: What the request's state means to a person, as the filter planetscale.cloud.deploy_request_status gives
    it (V(pending), V(deployable), V(blocked), V(no_changes), V(deploying), V(awaiting_cutover), V(revertable),
    V(complete), V(failed) or V(cancelled)).
  returned: when the request exists or would be created; on a failure of the wait, the last state's
  type: str
  sample: revertable
msg:
  description: Why the task stopped short of a deploy, when the request has no changes or awaits its cutover.
  returned: when the request has no changes, or a gated deploy waits for O(cutover)
  type: str
"""

from ansible_collections.planetscale.cloud.plugins.module_utils.adapter import run_module
from ansible_collections.planetscale.cloud.plugins.module_utils.deploy_requests import DeployRequestFlow
from ansible_collections.planetscale.cloud.plugins.module_utils.options import (
    CONNECTION, CREDENTIALS, ORGANIZATION, WAIT)


class DeployRequest(DeployRequestFlow):
    """The rules are in DeployRequestFlow: find or create the request, then the deploy, each write settled."""

    option_sets = (CREDENTIALS, CONNECTION, ORGANIZATION, WAIT)
    argument_spec = dict(
        database=dict(type="str", required=True),
        number=dict(type="int"),
        branch=dict(type="str"),
        into_branch=dict(type="str"),
        state=dict(type="str", choices=["open", "deployed", "closed"], default="open"),
        notes=dict(type="str"),
        auto_cutover=dict(type="bool"),
        auto_delete_branch=dict(type="bool"),
        instant_ddl=dict(type="bool"),
        cutover=dict(type="bool", default=False),
        revert_window=dict(type="str", choices=["keep", "skip", "revert"], default="keep"),
        wait_timeout=dict(type="int", default=1800),
    )
    path_options = ("database", "branch", "into_branch")


def main():
    run_module(DeployRequest)


if __name__ == "__main__":
    main()
