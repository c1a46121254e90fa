# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: deploy_request_status
short_description: Say in one word what a deploy request waits for, or what became of it
version_added: 0.2.0
author:
  - planetscale.cloud contributors (@planetscale-ansible)
description:
  - Collapses a deploy request's 20 deployment states, its deployment's C(deployable) flag and its lint errors into
    the one word a person acts on. M(planetscale.cloud.deploy_request) returns the same word as its C(status).
  - V(pending) - the deploy check is running.
  - V(deployable) - the check passed (C(ready), deployable, no lint errors); it can be deployed.
  - V(blocked) - it cannot be deployed until the branch's schema is fixed - lint errors, a failed deploy check
    (C(error) before any deploy), or C(ready) but not deployable.
  - V(no_changes) - the branch has no schema changes to deploy.
  - V(deploying) - a deploy or a revert is running (C(queued), C(submitting), C(in_progress),
    C(in_progress_vschema), C(in_progress_cutover), C(in_progress_revert), C(in_progress_revert_vschema)).
  - V(awaiting_cutover) - a gated deploy is ready and waits for its cutover (C(pending_cutover)).
  - V(revertable) - the schema change is live and can still be reverted (C(complete_pending_revert)).
  - V(complete) - the schema change is live for good (C(complete)).
  - V(failed) - the deploy or its revert failed (C(complete_error), C(complete_revert_error), or C(error) after the
    deploy was queued).
  - V(cancelled) - the change is not live and will not be - the deploy was cancelled (C(in_progress_cancel),
    C(complete_cancel), C(cancelled)) or reverted (C(complete_revert)), or the request was closed without a deploy.
positional: _input
options:
  _input:
    description:
      - A deploy request as M(planetscale.cloud.deploy_request) or M(planetscale.cloud.deploy_request_info) return
        it (its C(deployment_state), C(state) and C(deployment)), or a deployment alone (its C(state) and
        C(deployable)).
    type: dict
    required: true
seealso:
  - module: planetscale.cloud.deploy_request
  - module: planetscale.cloud.deploy_request_info
"""

EXAMPLES = r"""
- name: List the open deploy requests
  planetscale.cloud.deploy_request_info:
    organization: acme
    database: shop
    state: open
  register: result

- name: Name the ones a person has to look at
  ansible.builtin.debug:
    msg: "#{{ item.number }} from {{ item.branch }} is {{ item | planetscale.cloud.deploy_request_status }}"
  loop: "{{ result.deploy_requests }}"
  when: item | planetscale.cloud.deploy_request_status in ['blocked', 'awaiting_cutover', 'failed']

# {"state": "open", "deployment_state": "pending_cutover"} | planetscale.cloud.deploy_request_status  =>  'awaiting_cutover'
"""

RETURN = r"""
_value:
  description: One of V(pending), V(deployable), V(blocked), V(no_changes), V(deploying), V(awaiting_cutover),
    V(revertable), V(complete), V(failed) or V(cancelled).
  type: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.planetscale.cloud.plugins.module_utils.deploy_requests import deployment_state, status


def deploy_request_status(value):
    """The word a person acts on for a deploy request (or its deployment)."""
    if not isinstance(value, dict):
        raise AnsibleFilterError("deploy_request_status expects a deploy request (a dict, such as the deploy_request "
                                 "that planetscale.cloud.deploy_request returns), not %s." % type(value).__name__)
    state = deployment_state(value) if "deployment_state" in value or "deployment" in value else value.get("state")
    word = status(dict(value, deployment_state=state) if "deployment_state" not in value else value)
    if word is None:
        raise AnsibleFilterError("deploy_request_status: %s is not a deployment state it knows; give it a deploy "
                                 "request with its deployment_state." % (
                                     "the deployment state %r" % state if state else "a record without a state"))
    return word


class FilterModule:
    """Deploy request filters of planetscale.cloud."""

    def filters(self):
        return dict(deploy_request_status=deploy_request_status)
